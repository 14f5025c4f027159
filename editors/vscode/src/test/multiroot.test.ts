import assert = require('node:assert/strict');
import { afterEach, beforeEach, describe, test } from 'node:test';
import { fake, FakeLanguageClient, folder, loadExtension } from './stubs';

type Extension = ReturnType<typeof loadExtension>;

async function settle(): Promise<void> {
    for (let i = 0; i < 20; i++) {
        await new Promise((resolve) => setImmediate(resolve));
    }
}

function byFolder(): Map<string, FakeLanguageClient> {
    const live = FakeLanguageClient.instances.filter((c) => !c.stopped);
    return new Map(live.map((c) => [c.clientOptions.workspaceFolder?.uri.fsPath ?? '', c]));
}

/** A Python extension whose active environment differs per folder. */
function pythonPerFolder(envs: Record<string, string>): void {
    fake.pythonExtension = {
        isActive: true,
        exports: {
            environments: {
                getActiveEnvironmentPath: (resource?: { fsPath: string }) =>
                    resource && envs[resource.fsPath] ? { path: envs[resource.fsPath] } : undefined,
            },
        },
        activate: async () => undefined,
    };
}

describe('multi-root workspaces', () => {
    let extension: Extension;

    beforeEach(() => {
        fake.reset();
        extension = loadExtension();
    });

    afterEach(async () => {
        await extension.deactivate();
    });

    test("each folder's server runs that folder's Python environment, in that folder", async () => {
        fake.folders = [folder('/ws/kernels', 0), folder('/ws/app', 1)];
        pythonPerFolder({ '/ws/kernels': '/ws/kernels/.venv/bin/python', '/ws/app': '/opt/conda/bin/python' });

        await extension.activate({ subscriptions: [] } as never);

        const servers = byFolder();
        assert.deepEqual([...servers.keys()].sort(), ['/ws/app', '/ws/kernels']);
        assert.deepEqual(servers.get('/ws/kernels')?.serverOptions,
            { command: '/ws/kernels/.venv/bin/python', args: ['-I', '-m', 'tilelens_lsp'], options: { cwd: '/ws/kernels' } });
        assert.equal(servers.get('/ws/app')?.serverOptions.command, '/opt/conda/bin/python');
        assert.deepEqual(servers.get('/ws/app')?.clientOptions.documentSelector,
            [{ scheme: 'file', language: 'python', pattern: '/ws/app/**/*' }]);
    });

    test("a folder's own settings reach only its server", async () => {
        fake.folders = [folder('/ws/a', 0), folder('/ws/b', 1)];
        fake.settings['tilelens.interpreter'] = '/usr/bin/python3';
        fake.folderSettings['/ws/b'] = { 'tilelens.interpreter': '/ws/b/venv/bin/python', 'tilelens.allowOutsideWorkspace': true };

        await extension.activate({ subscriptions: [] } as never);

        const servers = byFolder();
        assert.equal(servers.get('/ws/a')?.serverOptions.command, '/usr/bin/python3');
        assert.equal(servers.get('/ws/b')?.serverOptions.command, '/ws/b/venv/bin/python');
        assert.equal(servers.get('/ws/a')?.clientOptions.initializationOptions.allowOutsideWorkspace, false);
        assert.equal(servers.get('/ws/b')?.clientOptions.initializationOptions.allowOutsideWorkspace, true);
    });

    test('a nested folder shares its parent folder\'s server', async () => {
        fake.folders = [folder('/ws', 0), folder('/ws/sub', 1)];

        await extension.activate({ subscriptions: [] } as never);

        assert.deepEqual([...byFolder().keys()], ['/ws']);
    });

    test('adding a folder starts its server; removing one stops it', async () => {
        fake.folders = [folder('/ws/a', 0)];
        await extension.activate({ subscriptions: [] } as never);
        const first = byFolder().get('/ws/a');

        await fake.setFolders([folder('/ws/a', 0), folder('/ws/b', 1)]);
        await settle();
        assert.deepEqual([...byFolder().keys()].sort(), ['/ws/a', '/ws/b']);
        assert.equal(byFolder().get('/ws/a'), first, 'the existing server is kept');

        await fake.setFolders([folder('/ws/b', 0)]);
        await settle();
        assert.deepEqual([...byFolder().keys()], ['/ws/b']);
        assert.ok(first?.stopped);
    });

    test("changing one folder's interpreter restarts only that folder's server", async () => {
        fake.folders = [folder('/ws/a', 0), folder('/ws/b', 1)];
        await extension.activate({ subscriptions: [] } as never);
        const before = byFolder();

        await fake.changeFolderSettings('/ws/b', { interpreter: '/new/python' });
        await settle();

        const after = byFolder();
        assert.equal(after.get('/ws/a'), before.get('/ws/a'));
        assert.ok(before.get('/ws/b')?.stopped);
        assert.equal(after.get('/ws/b')?.serverOptions.command, '/new/python');
    });

    test('restart restarts every folder\'s server', async () => {
        fake.folders = [folder('/ws/a', 0), folder('/ws/b', 1)];
        await extension.activate({ subscriptions: [] } as never);
        const before = [...byFolder().values()];

        await fake.commands.get('tilelens.restart')?.();

        assert.ok(before.every((c) => c.stopped));
        assert.equal(byFolder().size, 2);
    });
});

describe('status item', () => {
    let extension: Extension;

    beforeEach(() => {
        fake.reset();
        extension = loadExtension();
    });

    afterEach(async () => {
        await extension.deactivate();
    });

    function item() {
        assert.equal(fake.statusItems.length, 1);
        return fake.statusItems[0];
    }

    const doc = (fsPath: string) => ({ uri: { fsPath, toString: () => `file://${fsPath}` } });

    test('is shown, opens the output on click, and is idle once the server runs', async () => {
        await extension.activate({ subscriptions: [] } as never);

        assert.ok(item().visible);
        assert.equal(item().command, 'tilelens.showOutput');
        assert.equal(item().text, '$(check) TileLens: idle');
        await fake.commands.get('tilelens.showOutput')?.();
        assert.equal(fake.channels[0].shown, 1);
    });

    test('says analysing between a save and the diagnostics, then the last result', async () => {
        await extension.activate({ subscriptions: [] } as never);
        const middleware = FakeLanguageClient.instances[0].clientOptions.middleware;
        const forwarded: string[] = [];

        await middleware.didSave(doc('/ws/add.py'), async () => { forwarded.push('didSave'); });
        assert.equal(item().text, '$(sync~spin) TileLens: analysing');

        middleware.handleDiagnostics(doc('/ws/add.py').uri, [{ severity: 0 }, { severity: 0 }, { severity: 3 }],
            () => { forwarded.push('diagnostics'); });
        assert.equal(item().text, '$(error) TileLens: 2 errors');
        assert.match(String(item().tooltip), /add\.py/);
        assert.deepEqual(forwarded, ['didSave', 'diagnostics'], 'the middleware passes everything on');

        await middleware.didOpen(doc('/ws/clean.py'), async () => undefined);
        middleware.handleDiagnostics(doc('/ws/clean.py').uri, [], () => undefined);
        assert.equal(item().text, '$(check) TileLens: clean');
    });

    test('follows the active editor: switching back to a file shows that file\'s result', async () => {
        await extension.activate({ subscriptions: [] } as never);
        const middleware = FakeLanguageClient.instances[0].clientOptions.middleware;
        middleware.handleDiagnostics(doc('/ws/buggy.py').uri, [{ severity: 0 }, { severity: 0 }], () => undefined);
        middleware.handleDiagnostics(doc('/ws/add.py').uri, [], () => undefined);
        assert.equal(item().text, '$(check) TileLens: clean');

        fake.activeEditor = { document: doc('/ws/buggy.py') };
        await fake.activeEditorChanged.fire(fake.activeEditor);
        assert.equal(item().text, '$(error) TileLens: 2 errors');
        assert.match(String(item().tooltip), /This file: buggy\.py/);

        fake.activeEditor = { document: doc('/ws/add.py') };
        await fake.activeEditorChanged.fire(fake.activeEditor);
        assert.equal(item().text, '$(check) TileLens: clean');
    });

    test('says the server is not running when it failed to start', async () => {
        FakeLanguageClient.failStart = new Error('spawn /missing/python ENOENT');

        await extension.activate({ subscriptions: [] } as never);
        await settle();

        assert.equal(item().text, '$(error) TileLens: not running');
        assert.match(String(item().tooltip), /ENOENT/);
    });

    test('is disposed with the extension', async () => {
        const context = { subscriptions: [] as { dispose(): unknown }[] };
        await extension.activate(context as never);
        assert.ok(context.subscriptions.includes(item() as never));
    });
});
