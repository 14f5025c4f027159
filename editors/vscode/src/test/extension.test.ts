import assert = require('node:assert/strict');
import { afterEach, beforeEach, describe, test } from 'node:test';
import { fake, FakeLanguageClient, loadExtension } from './stubs';

type Extension = ReturnType<typeof loadExtension>;

function newContext(): { subscriptions: { dispose(): unknown }[] } {
    return { subscriptions: [] };
}

function clients(): FakeLanguageClient[] {
    return FakeLanguageClient.instances;
}

function lastClient(): FakeLanguageClient {
    const all = clients();
    assert.ok(all.length > 0, 'no LanguageClient was created');
    return all[all.length - 1];
}

async function runCommand(id: string): Promise<void> {
    const command = fake.commands.get(id);
    assert.ok(command, `command ${id} is not registered`);
    await command();
}

/** Configuration listeners fire restarts without awaiting them; let queued work finish. */
async function settle(): Promise<void> {
    for (let i = 0; i < 10; i++) {
        await new Promise((resolve) => setImmediate(resolve));
    }
}

describe('activate', () => {
    let extension: Extension;

    beforeEach(() => {
        fake.reset();
        extension = loadExtension();
    });

    afterEach(async () => {
        await extension.deactivate();
    });

    test('registers the restart command and starts one client with the configured interpreter', async () => {
        fake.settings['tilelens.interpreter'] = '/opt/triton/bin/python';
        fake.folders = [{ uri: { fsPath: '/ws', toString: () => 'file:///ws' }, name: 'ws', index: 0 }];
        const context = newContext();

        await extension.activate(context as never);

        assert.ok(fake.commands.has('tilelens.restart'));
        assert.equal(clients().length, 1);
        const client = lastClient();
        assert.equal(client.id, 'tilelens');
        assert.deepEqual(client.serverOptions, {
            command: '/opt/triton/bin/python',
            args: ['-I', '-m', 'tilelens_lsp'],
            options: { cwd: '/ws' },
        });
        assert.deepEqual(client.calls, ['start']);
        assert.ok(context.subscriptions.length >= 4, 'disposables are handed to the context');
    });

    test('passes the settings as initializationOptions', async () => {
        Object.assign(fake.settings, {
            'tilelens.interpreter': '/py',
            'tilelens.target': 'cuda:90',
            'tilelens.workerTimeout': 12,
            'tilelens.clients': ['sanitizer'],
        });

        await extension.activate(newContext() as never);

        assert.deepEqual(lastClient().clientOptions.initializationOptions, {
            target: 'cuda:90',
            workerTimeout: 12,
            clients: ['sanitizer'],
            interpreter: '/py',
            memoryLimitMb: 4096,
            allowOutsideWorkspace: false,
            enumerationBudget: 268435456,
        });
    });

    test('defaults reach the server when nothing is configured', async () => {
        await extension.activate(newContext() as never);

        assert.equal(lastClient().serverOptions.command, process.platform === 'win32' ? 'python' : 'python3');
        assert.deepEqual(lastClient().clientOptions.initializationOptions, {
            target: 'cuda:89',
            workerTimeout: 30,
            clients: ['footprint', 'sanitizer', 'overflow'],
            interpreter: process.platform === 'win32' ? 'python' : 'python3',
            memoryLimitMb: 4096,
            allowOutsideWorkspace: false,
            enumerationBudget: 268435456,
        });
    });

    test('selects python files on disk and untitled, and synchronizes the tilelens section', async () => {
        await extension.activate(newContext() as never);

        const options = lastClient().clientOptions;
        assert.deepEqual(options.documentSelector, [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
        ]);
        assert.deepEqual(options.synchronize, { configurationSection: 'tilelens' });
    });

    test('logs to an output channel named tilelens', async () => {
        await extension.activate(newContext() as never);

        assert.equal(fake.channels.length, 1);
        assert.equal(fake.channels[0].name, 'tilelens');
        assert.equal(lastClient().clientOptions.outputChannel, fake.channels[0]);
    });

    test('uses the Python extension environment when no interpreter is configured', async () => {
        fake.pythonExtension = {
            isActive: false,
            exports: undefined,
            activate: async () => ({
                environments: {
                    getActiveEnvironmentPath: () => ({ id: 'venv', path: '/proj/.venv' }),
                    resolveEnvironment: async () => ({ executable: { uri: { fsPath: '/proj/.venv/bin/python' } } }),
                },
            }),
        };

        await extension.activate(newContext() as never);

        assert.equal(lastClient().serverOptions.command, '/proj/.venv/bin/python');
    });

    test('a Python extension that fails to activate is ignored', async () => {
        fake.pythonExtension = {
            isActive: false,
            exports: undefined,
            activate: async () => { throw new Error('broken'); },
        };

        await extension.activate(newContext() as never);

        assert.equal(lastClient().serverOptions.command, process.platform === 'win32' ? 'python' : 'python3');
    });

    test('restart stops the running client and starts a new one', async () => {
        fake.settings['tilelens.interpreter'] = '/py';
        await extension.activate(newContext() as never);
        const first = lastClient();

        await runCommand('tilelens.restart');

        assert.equal(clients().length, 2);
        assert.ok(first.stopped, 'the first client was stopped');
        assert.deepEqual(lastClient().calls, ['start']);
        assert.equal(lastClient().serverOptions.command, '/py');
    });

    test('changing tilelens.interpreter restarts the server with the new interpreter', async () => {
        fake.settings['tilelens.interpreter'] = '/old/python';
        await extension.activate(newContext() as never);
        const first = lastClient();

        await fake.changeSettings({ interpreter: '/new/python' });
        await settle();

        assert.ok(first.stopped);
        assert.equal(clients().length, 2);
        assert.equal(lastClient().serverOptions.command, '/new/python');
        assert.deepEqual(lastClient().calls, ['start']);
    });

    test('changing other settings does not restart the server', async () => {
        await extension.activate(newContext() as never);

        await fake.changeSettings({ target: 'cuda:90', workerTimeout: 5 });
        await settle();

        assert.equal(clients().length, 1);
        assert.equal(lastClient().stopped, false);
    });

    test('configuration pushed to the server is the normalized record with the resolved interpreter', async () => {
        fake.settings['tilelens.interpreter'] = '~/venv/bin/python';
        fake.settings['tilelens.target'] = 'hip:gfx942';
        await extension.activate(newContext() as never);

        const client = lastClient();
        assert.equal(client.notifications.length, 1);
        const { method, params } = client.notifications[0];
        assert.equal(method, 'workspace/didChangeConfiguration');
        const sent = (params as { settings: { tilelens: Record<string, unknown> } }).settings.tilelens;
        assert.equal(sent.target, 'hip:gfx942');
        assert.equal(sent.interpreter, client.serverOptions.command);
        assert.ok(!String(sent.interpreter).startsWith('~'), 'the interpreter is expanded');
    });

    test('a server that fails to start is reported, and activation still succeeds', async () => {
        fake.settings['tilelens.interpreter'] = '/missing/python';
        FakeLanguageClient.failStart = new Error('spawn /missing/python ENOENT');

        await extension.activate(newContext() as never);
        await settle();

        assert.equal(fake.errors.length, 1);
        assert.match(fake.errors[0], /\/missing\/python -I -m tilelens_lsp/);
        assert.ok(fake.commands.has('tilelens.restart'), 'restart stays available');
        assert.ok(fake.channels[0].lines.some((line) => line.includes('ENOENT')));
    });

    test('deactivate stops the client', async () => {
        await extension.activate(newContext() as never);
        const client = lastClient();

        await extension.deactivate();

        assert.ok(client.stopped);
    });

    test('deactivate before activate does nothing', async () => {
        await extension.deactivate();
        assert.equal(clients().length, 0);
    });
});
