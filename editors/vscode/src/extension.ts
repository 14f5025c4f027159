/**
 * VS Code wiring for the TileLens language server: one client per top-level workspace folder (each
 * with that folder's settings and Python interpreter), or one for the window when no folder is open;
 * a status bar item that shows idle / analysing / the last result. What to launch is decided in
 * `launch.ts`, which folder serves a document in `folders.ts`, what the status says in `status.ts`;
 * this module only talks to VS Code.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions } from 'vscode-languageclient/node';
import { documentSelectorFor, serverKey, topLevelFolders } from './folders';
import {
    chooseInterpreter,
    describeCommand,
    pythonFromExtensionApi,
    serverExecutable,
    serverSettings,
    type Interpreter,
    type PythonExtensionApi,
    type TilelensSettings,
} from './launch';
import { countDiagnostics, StatusModel } from './status';

const SECTION = 'tilelens';
const PYTHON_EXTENSION = 'ms-python.python';
const SEVERITY_NAMES = ['error', 'warning', 'information', 'hint'] as const;

let manager: Manager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = vscode.window.createOutputChannel('tilelens', { log: true });
    const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
    item.name = 'TileLens';
    item.command = 'tilelens.showOutput';
    item.show();
    const current = new Manager(output, new StatusModel(), item);
    const follow = (editor: vscode.TextEditor | undefined) => {
        current.status.focus(editor?.document.uri.toString());
        current.render();
    };
    follow(vscode.window.activeTextEditor);
    context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(follow));
    manager = current;
    current.render();
    context.subscriptions.push(
        output,
        item,
        vscode.commands.registerCommand('tilelens.restart', () => current.restartAll()),
        vscode.commands.registerCommand('tilelens.showOutput', () => output.show()),
        vscode.workspace.onDidChangeConfiguration((event) => {
            // Other tilelens.* settings reach the running servers through didChangeConfiguration.
            for (const server of current.servers()) {
                if (event.affectsConfiguration(`${SECTION}.interpreter`, server.folder?.uri)) {
                    void server.restart();
                }
            }
        }),
        vscode.workspace.onDidChangeWorkspaceFolders(() => current.sync()),
    );
    const python = await pythonExtensionApi();
    const onEnvironment = python?.environments?.onDidChangeActiveEnvironmentPath;
    if (onEnvironment !== undefined) {
        context.subscriptions.push(onEnvironment(() => {
            for (const server of current.servers()) {
                if (server.interpreterSource === 'python-extension') {
                    void server.restart();
                }
            }
        }));
    }
    await current.sync();
}

export async function deactivate(): Promise<void> {
    const stopping = manager?.stopAll();
    manager = undefined;
    await stopping;
}

type PythonApi = PythonExtensionApi & {
    environments?: { onDidChangeActiveEnvironmentPath?: vscode.Event<unknown> };
};

async function pythonExtensionApi(): Promise<PythonApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
    if (extension === undefined) {
        return undefined;
    }
    try {
        return extension.isActive ? extension.exports : await extension.activate();
    } catch {
        return undefined;
    }
}

async function resolveInterpreter(
    configured: unknown,
    folder: vscode.WorkspaceFolder | undefined,
    output: vscode.LogOutputChannel,
): Promise<Interpreter> {
    let fromPython: string | undefined;
    if (typeof configured !== 'string' || configured.trim() === '') {
        try {
            // The Python extension answers per folder: each folder may have its own environment.
            fromPython = await pythonFromExtensionApi(await pythonExtensionApi(), folder?.uri);
        } catch (error) {
            output.warn(`Python extension did not report an environment: ${String(error)}`);
        }
    }
    return chooseInterpreter(configured, fromPython, { workspaceFolder: folder?.uri.fsPath });
}

function readSettings(folder: vscode.WorkspaceFolder | undefined): TilelensSettings {
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    return {
        interpreter: config.get('interpreter'),
        target: config.get('target'),
        workerTimeout: config.get('workerTimeout'),
        clients: config.get('clients'),
        memoryLimitMb: config.get('memoryLimitMb'),
        allowOutsideWorkspace: config.get('allowOutsideWorkspace'),
        enumerationBudget: config.get('enumerationBudget'),
    };
}

/** The servers of the window: one per top-level folder, kept in step with the open folders. */
class Manager {
    private readonly byKey = new Map<string, Server>();
    private queue: Promise<void> = Promise.resolve();

    constructor(
        private readonly output: vscode.LogOutputChannel,
        readonly status: StatusModel,
        private readonly item: vscode.StatusBarItem,
    ) {}

    servers(): Server[] {
        return [...this.byKey.values()];
    }

    render(): void {
        const view = this.status.render();
        this.item.text = view.text;
        this.item.tooltip = view.tooltip;
    }

    /** Start a server for each new top-level folder, stop those of removed folders. */
    sync(): Promise<void> {
        this.queue = this.queue.then(async () => {
            const folders = vscode.workspace.workspaceFolders ?? [];
            const wanted: (vscode.WorkspaceFolder | undefined)[] = folders.length > 0 ? topLevelFolders(folders) : [undefined];
            const keys = new Set(wanted.map(serverKey));
            for (const [key, server] of [...this.byKey]) {
                if (!keys.has(key)) {
                    this.byKey.delete(key);
                    this.status.forget(key);
                    await server.stop();
                }
            }
            for (const folder of wanted) {
                const key = serverKey(folder);
                if (!this.byKey.has(key)) {
                    const server = new Server(folder, this.output, this);
                    this.byKey.set(key, server);
                    await server.start();
                }
            }
            this.render();
        });
        return this.queue;
    }

    async restartAll(): Promise<void> {
        await Promise.all(this.servers().map((server) => server.restart()));
    }

    async stopAll(): Promise<void> {
        const servers = this.servers();
        this.byKey.clear();
        await Promise.all(servers.map((server) => server.stop()));
    }
}

/** Owns one folder's LanguageClient; start, stop and restart run one after another, never interleaved. */
class Server {
    private client: LanguageClient | undefined;
    private queue: Promise<void> = Promise.resolve();
    interpreterSource: Interpreter['source'] | undefined;

    constructor(
        readonly folder: vscode.WorkspaceFolder | undefined,
        private readonly output: vscode.LogOutputChannel,
        private readonly manager: Manager,
    ) {}

    start(): Promise<void> {
        return this.enqueue(() => this.doStart());
    }

    stop(): Promise<void> {
        return this.enqueue(() => this.doStop());
    }

    restart(): Promise<void> {
        return this.enqueue(async () => {
            await this.doStop();
            await this.doStart();
        });
    }

    private enqueue(step: () => Promise<void>): Promise<void> {
        this.queue = this.queue.then(step, step);
        return this.queue;
    }

    private setState(state: 'starting' | 'running' | 'stopped' | 'failed', why?: string): void {
        this.manager.status.server(serverKey(this.folder), state, why);
        this.manager.render();
    }

    private async doStart(): Promise<void> {
        const folder = this.folder;
        const settings = readSettings(folder);
        const interpreter = await resolveInterpreter(settings.interpreter, folder, this.output);
        this.interpreterSource = interpreter.source;
        const executable = serverExecutable(interpreter.path, folder?.uri.fsPath);
        const status = this.manager.status;
        const render = () => this.manager.render();
        const clientOptions: LanguageClientOptions = {
            documentSelector: documentSelectorFor(folder),
            workspaceFolder: folder,
            synchronize: { configurationSection: SECTION },
            initializationOptions: serverSettings(settings, interpreter.path),
            outputChannel: this.output,
            diagnosticCollectionName: SECTION,
            middleware: {
                didOpen: async (document, next) => {
                    status.started(document.uri.toString());
                    render();
                    return next(document);
                },
                didSave: async (document, next) => {
                    status.started(document.uri.toString());
                    render();
                    return next(document);
                },
                didClose: async (document, next) => {
                    status.closed(document.uri.toString());
                    render();
                    return next(document);
                },
                handleDiagnostics: (uri, diagnostics, next) => {
                    const severities = diagnostics.map((d) => SEVERITY_NAMES[d.severity] ?? 'hint');
                    status.finished(uri.toString(), path.basename(uri.fsPath ?? uri.toString()), countDiagnostics(severities));
                    render();
                    next(uri, diagnostics);
                },
                workspace: {
                    // The raw section may hold an empty or `~`-relative interpreter; the server gets the
                    // same normalized record as at initialization, naming the python it runs in.
                    didChangeConfiguration: async () => {
                        await client.sendNotification('workspace/didChangeConfiguration', {
                            settings: { [SECTION]: serverSettings(readSettings(folder), interpreter.path) },
                        });
                    },
                },
            },
        };
        const name = folder === undefined ? 'TileLens' : `TileLens (${folder.name})`;
        const client = new LanguageClient(SECTION, name, executable, clientOptions);
        this.client = client;
        this.setState('starting');
        this.output.info(`Starting ${describeCommand(executable)} for ${folder?.name ?? 'the window'} `
            + `(interpreter from ${interpreter.source})`);
        try {
            await client.start();
            this.setState('running');
        } catch (error) {
            this.output.error(`The server did not start: ${String(error)}`);
            this.setState('failed', String(error));
            void this.reportStartFailure(describeCommand(executable));
        }
    }

    private async doStop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client === undefined) {
            return;
        }
        try {
            await client.dispose();
        } catch (error) {
            this.output.warn(`Stopping the server: ${String(error)}`);
        }
        this.setState('stopped');
    }

    private async reportStartFailure(command: string): Promise<void> {
        const choice = await vscode.window.showErrorMessage(
            `TileLens: "${command}" did not start. Install tilelens-lsp into that Python environment or set "tilelens.interpreter".`,
            'Open Settings',
            'Show Output',
        );
        if (choice === 'Open Settings') {
            await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.interpreter`);
        } else if (choice === 'Show Output') {
            this.output.show();
        }
    }
}
