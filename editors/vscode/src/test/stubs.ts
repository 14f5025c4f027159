/**
 * Stand-ins for `vscode` and `vscode-languageclient/node`, which only exist inside VS Code's extension
 * host. `installStubs()` routes `require` of those two names here, so `out/extension.js` runs under
 * plain `node --test` and the tests can see what it registered, created, started and stopped.
 */

import Module = require('node:module');
import * as path from 'node:path';

type Listener<T> = (event: T) => unknown;

export class FakeEvent<T> {
    readonly listeners: Listener<T>[] = [];
    readonly event = (listener: Listener<T>) => {
        this.listeners.push(listener);
        return { dispose: () => this.listeners.splice(this.listeners.indexOf(listener), 1) };
    };
    async fire(value: T): Promise<void> {
        for (const listener of [...this.listeners]) {
            await listener(value);
        }
    }
}

export class FakeOutputChannel {
    readonly lines: string[] = [];
    shown = 0;
    disposed = false;
    constructor(readonly name: string, readonly options: unknown) {}
    info(line: string) { this.lines.push(`info ${line}`); }
    warn(line: string) { this.lines.push(`warn ${line}`); }
    error(line: string) { this.lines.push(`error ${line}`); }
    appendLine(line: string) { this.lines.push(line); }
    show() { this.shown += 1; }
    dispose() { this.disposed = true; }
}

export class FakeStatusBarItem {
    text = '';
    tooltip: unknown = '';
    name = '';
    command: unknown;
    visible = false;
    disposed = false;
    constructor(readonly alignment: unknown, readonly priority: unknown) {}
    show() { this.visible = true; }
    hide() { this.visible = false; }
    dispose() { this.disposed = true; }
}

export class FakeLanguageClient {
    static instances: FakeLanguageClient[] = [];
    static failStart: Error | undefined;
    readonly calls: string[] = [];
    readonly notifications: { method: string; params: unknown }[] = [];

    constructor(
        readonly id: string,
        readonly name: string,
        readonly serverOptions: any,
        readonly clientOptions: any,
    ) {
        FakeLanguageClient.instances.push(this);
    }
    async start(): Promise<void> {
        this.calls.push('start');
        if (FakeLanguageClient.failStart !== undefined) {
            throw FakeLanguageClient.failStart;
        }
        // The real client pushes the configuration section once it is running.
        await this.clientOptions.middleware?.workspace?.didChangeConfiguration?.(['tilelens'], async () => {});
    }
    async stop(): Promise<void> { this.calls.push('stop'); }
    async dispose(): Promise<void> { this.calls.push('dispose'); }
    async sendNotification(method: string, params: unknown): Promise<void> {
        this.notifications.push({ method, params });
    }
    get stopped(): boolean {
        return this.calls.includes('stop') || this.calls.includes('dispose');
    }
}

export interface FakePythonExtension {
    isActive: boolean;
    exports: unknown;
    activate(): Promise<unknown>;
}

/** Mutable world the fake `vscode` reads from; `reset()` restores a fresh window. */
export type FakeFolder = { uri: { fsPath: string; toString(): string }; name: string; index: number };

export function folder(fsPath: string, index = 0): FakeFolder {
    return { uri: { fsPath, toString: () => `file://${fsPath}` }, name: fsPath.split('/').pop() ?? fsPath, index };
}

export class FakeVscode {
    settings: Record<string, unknown> = {};
    /** Settings of one folder (`tilelens.interpreter` in its .vscode/settings.json), by its fsPath. */
    folderSettings: Record<string, Record<string, unknown>> = {};
    folders: FakeFolder[] = [];
    statusItems: FakeStatusBarItem[] = [];
    readonly foldersChanged = new FakeEvent<unknown>();
    pythonExtension: FakePythonExtension | undefined;
    commands = new Map<string, (...args: unknown[]) => unknown>();
    executed: unknown[][] = [];
    errors: string[] = [];
    errorChoice: string | undefined;
    channels: FakeOutputChannel[] = [];
    readonly activeEditorChanged = new FakeEvent<unknown>();
    activeEditor: { document: { uri: { toString(): string } } } | undefined = undefined;
    readonly configurationChanged = new FakeEvent<{ affectsConfiguration(section: string, scope?: { fsPath: string }): boolean }>();

    reset(): void {
        this.settings = {};
        this.folderSettings = {};
        this.folders = [];
        this.statusItems = [];
        this.foldersChanged.listeners.length = 0;
        this.pythonExtension = undefined;
        this.commands = new Map();
        this.executed = [];
        this.errors = [];
        this.errorChoice = undefined;
        this.channels = [];
        this.configurationChanged.listeners.length = 0;
        this.activeEditorChanged.listeners.length = 0;
        this.activeEditor = undefined;
        FakeLanguageClient.instances = [];
        FakeLanguageClient.failStart = undefined;
    }

    /** Change `tilelens.<key>` settings and fire the event VS Code would fire. */
    async changeSettings(values: Record<string, unknown>): Promise<void> {
        const changed = Object.keys(values).map((key) => `tilelens.${key}`);
        for (const [key, value] of Object.entries(values)) {
            this.settings[`tilelens.${key}`] = value;
        }
        await this.configurationChanged.fire({
            affectsConfiguration: (section: string) =>
                changed.some((key) => key === section || key.startsWith(`${section}.`)),
        });
    }

    /** Change `tilelens.<key>` in one folder's settings; the event affects that folder only. */
    async changeFolderSettings(fsPath: string, values: Record<string, unknown>): Promise<void> {
        const changed = Object.keys(values).map((key) => `tilelens.${key}`);
        const own = (this.folderSettings[fsPath] ??= {});
        for (const [key, value] of Object.entries(values)) {
            own[`tilelens.${key}`] = value;
        }
        await this.configurationChanged.fire({
            affectsConfiguration: (section: string, scope?: { fsPath: string }) =>
                (scope === undefined || scope.fsPath === fsPath)
                && changed.some((key) => key === section || key.startsWith(`${section}.`)),
        });
    }

    /** Replace the open folders and fire the event VS Code would fire. */
    async setFolders(folders: FakeFolder[]): Promise<void> {
        this.folders = folders;
        await this.foldersChanged.fire({});
    }

    module(): unknown {
        const self = this;
        return {
            version: '1.91.0',
            StatusBarAlignment: { Left: 1, Right: 2 },
            window: {
                createStatusBarItem: (alignment: unknown, priority: unknown) => {
                    const item = new FakeStatusBarItem(alignment, priority);
                    this.statusItems.push(item);
                    return item;
                },
                createOutputChannel: (name: string, options: unknown) => {
                    const channel = new FakeOutputChannel(name, options);
                    this.channels.push(channel);
                    return channel;
                },
                get activeTextEditor() { return self.activeEditor; },
                onDidChangeActiveTextEditor: this.activeEditorChanged.event,
                showErrorMessage: async (message: string) => {
                    this.errors.push(message);
                    return this.errorChoice;
                },
            },
            commands: {
                registerCommand: (id: string, callback: (...args: unknown[]) => unknown) => {
                    this.commands.set(id, callback);
                    return { dispose: () => this.commands.delete(id) };
                },
                executeCommand: async (...args: unknown[]) => {
                    this.executed.push(args);
                },
            },
            workspace: {
                get workspaceFolders() { return self.folders.length > 0 ? self.folders : undefined; },
                getConfiguration: (section: string, scope?: { fsPath: string }) => ({
                    get: (key: string, defaultValue?: unknown) => {
                        const name = `${section}.${key}`;
                        const own = scope === undefined ? undefined : this.folderSettings[scope.fsPath];
                        if (own !== undefined && name in own) {
                            return own[name];
                        }
                        return name in this.settings ? this.settings[name] : defaultValue;
                    },
                }),
                onDidChangeConfiguration: this.configurationChanged.event,
                onDidChangeWorkspaceFolders: this.foldersChanged.event,
            },
            extensions: {
                getExtension: (id: string) => (id === 'ms-python.python' ? this.pythonExtension : undefined),
            },
        };
    }
}

export const fake = new FakeVscode();

let installed = false;

/** Make `require('vscode')` and `require('vscode-languageclient/node')` return the fakes. */
export function installStubs(): void {
    if (installed) {
        return;
    }
    installed = true;
    // Anything else the bundled vscode-languageclient touches while loading (`class X extends
    // vscode.CompletionItem`, ...) resolves to an inert class.
    const vscodeModule = new Proxy(fake.module() as Record<string | symbol, unknown>, {
        get: (target, name) => (name in target ? target[name] : class {}),
    });
    const clientModule = { LanguageClient: FakeLanguageClient };
    const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
    const original = loader._load;
    loader._load = function (request: string, parent: unknown, isMain: boolean) {
        if (request === 'vscode') {
            return vscodeModule;
        }
        if (request === 'vscode-languageclient/node') {
            return clientModule;
        }
        return original.call(this, request, parent, isMain);
    };
}

/** A fresh copy of out/extension.js, so module state does not leak between tests. */
export function loadExtension(): typeof import('../extension') {
    installStubs();
    const file = path.join(__dirname, '..', 'extension.js');
    delete require.cache[require.resolve(file)];
    return require(file) as typeof import('../extension');
}
