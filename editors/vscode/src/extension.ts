/**
 * VS Code wiring for the TileLens language server: one client per window, started on the first
 * Python document, restarted by command or when the interpreter changes. What to launch is decided in
 * `launch.ts`; this module only talks to VS Code.
 */

import * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions } from 'vscode-languageclient/node';
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

const SECTION = 'tilelens';
const PYTHON_EXTENSION = 'ms-python.python';

let server: Server | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const output = vscode.window.createOutputChannel('tilelens', { log: true });
    server = new Server(output);
    const current = server;
    context.subscriptions.push(
        output,
        vscode.commands.registerCommand('tilelens.restart', () => current.restart()),
        vscode.commands.registerCommand('tilelens.showOutput', () => output.show()),
        vscode.workspace.onDidChangeConfiguration((event) => {
            // Other tilelens.* settings reach the running server through didChangeConfiguration.
            if (event.affectsConfiguration(`${SECTION}.interpreter`)) {
                void current.restart();
            }
        }),
    );
    const python = await pythonExtensionApi();
    const onEnvironment = python?.environments?.onDidChangeActiveEnvironmentPath;
    if (onEnvironment !== undefined) {
        context.subscriptions.push(onEnvironment(() => {
            if (current.interpreterSource === 'python-extension') {
                void current.restart();
            }
        }));
    }
    await current.start();
}

export async function deactivate(): Promise<void> {
    const stopping = server?.stop();
    server = undefined;
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

function workspaceFolder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
}

async function resolveInterpreter(configured: unknown, output: vscode.LogOutputChannel): Promise<Interpreter> {
    let fromPython: string | undefined;
    if (typeof configured !== 'string' || configured.trim() === '') {
        try {
            fromPython = await pythonFromExtensionApi(await pythonExtensionApi(), workspaceFolder()?.uri);
        } catch (error) {
            output.warn(`Python extension did not report an environment: ${String(error)}`);
        }
    }
    return chooseInterpreter(configured, fromPython, { workspaceFolder: workspaceFolder()?.uri.fsPath });
}

function readSettings(): TilelensSettings {
    const config = vscode.workspace.getConfiguration(SECTION);
    return {
        interpreter: config.get('interpreter'),
        target: config.get('target'),
        workerTimeout: config.get('workerTimeout'),
        clients: config.get('clients'),
    };
}

/** Owns the current LanguageClient; start, stop and restart run one after another, never interleaved. */
class Server {
    private client: LanguageClient | undefined;
    private queue: Promise<void> = Promise.resolve();
    interpreterSource: Interpreter['source'] | undefined;

    constructor(private readonly output: vscode.LogOutputChannel) {}

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

    private async doStart(): Promise<void> {
        const settings = readSettings();
        const interpreter = await resolveInterpreter(settings.interpreter, this.output);
        this.interpreterSource = interpreter.source;
        const executable = serverExecutable(interpreter.path, workspaceFolder()?.uri.fsPath);
        const clientOptions: LanguageClientOptions = {
            documentSelector: [
                { scheme: 'file', language: 'python' },
                { scheme: 'untitled', language: 'python' },
            ],
            synchronize: { configurationSection: SECTION },
            initializationOptions: serverSettings(settings, interpreter.path),
            outputChannel: this.output,
            diagnosticCollectionName: SECTION,
            middleware: {
                workspace: {
                    // The raw section may hold an empty or `~`-relative interpreter; the server gets the
                    // same normalized record as at initialization, naming the python it runs in.
                    didChangeConfiguration: async () => {
                        await client.sendNotification('workspace/didChangeConfiguration', {
                            settings: { [SECTION]: serverSettings(readSettings(), interpreter.path) },
                        });
                    },
                },
            },
        };
        const client = new LanguageClient(SECTION, 'TileLens', executable, clientOptions);
        this.client = client;
        this.output.info(`Starting ${describeCommand(executable)} (interpreter from ${interpreter.source})`);
        try {
            await client.start();
        } catch (error) {
            this.output.error(`The server did not start: ${String(error)}`);
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
