/**
 * How the TileLens server is launched: which Python runs it, its command line, and the settings
 * record it receives as `initializationOptions` and in `workspace/didChangeConfiguration`.
 * Plain data in, plain data out: this module does not import `vscode`, so plain Node tests it.
 */

import * as os from 'node:os';

export const SERVER_MODULE = 'tilelens_lsp';
export const DEFAULT_TARGET = 'cuda:89';
export const DEFAULT_WORKER_TIMEOUT = 30;
export const ALL_CLIENTS: readonly string[] = ['footprint', 'sanitizer', 'overflow'];
export const DEFAULT_MEMORY_LIMIT_MB = 4096;
export const DEFAULT_ENUMERATION_BUDGET = 1 << 28;

/** The `tilelens` configuration section as VS Code hands it over: anything may be missing or odd. */
export interface TilelensSettings {
    interpreter?: unknown;
    target?: unknown;
    workerTimeout?: unknown;
    clients?: unknown;
    memoryLimitMb?: unknown;
    allowOutsideWorkspace?: unknown;
    enumerationBudget?: unknown;
}

/** What the server reads (camelCase keys; the server maps them onto its own settings record). */
export interface ServerSettings {
    target: string;
    workerTimeout: number;
    clients: string[];
    interpreter: string;
    memoryLimitMb: number;
    allowOutsideWorkspace: boolean;
    enumerationBudget: number;
}

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface Interpreter {
    path: string;
    source: InterpreterSource;
}

/** Values for `~`, `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in a configured path. */
export interface PathContext {
    workspaceFolder?: string;
    home?: string;
    env?: Record<string, string | undefined>;
}

/** Mirrors vscode-languageclient's `Executable` (stdio transport is its default). */
export interface ServerExecutable {
    command: string;
    args: string[];
    options: { cwd?: string };
}

export function expandPath(value: string, context: PathContext = {}): string {
    const home = context.home ?? os.homedir();
    const env = context.env ?? process.env;
    let result = value.trim();
    if (result === '~' || result.startsWith('~/') || result.startsWith('~\\')) {
        result = home + result.slice(1);
    }
    return result.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (match, name: string, envName?: string) => {
        if (envName !== undefined) {
            return env[envName] ?? '';
        }
        if (name === 'userHome') {
            return home;
        }
        // Without an open folder `${workspaceFolder}` stays as written, so the failure names it.
        return context.workspaceFolder ?? match;
    });
}

export function defaultPython(platform: NodeJS.Platform = process.platform): string {
    return platform === 'win32' ? 'python' : 'python3';
}

/**
 * The `tilelens.interpreter` setting wins, then the Python extension's active environment, then
 * `python3` from PATH.
 */
export function chooseInterpreter(
    configured: unknown,
    fromPythonExtension: string | undefined,
    context: PathContext = {},
    platform: NodeJS.Platform = process.platform,
): Interpreter {
    if (typeof configured === 'string' && configured.trim() !== '') {
        return { path: expandPath(configured, context), source: 'setting' };
    }
    if (fromPythonExtension !== undefined && fromPythonExtension.trim() !== '') {
        return { path: fromPythonExtension, source: 'python-extension' };
    }
    return { path: defaultPython(platform), source: 'default' };
}

export function serverExecutable(python: string, cwd?: string): ServerExecutable {
    // stdout carries the protocol; the server's stderr lands in the "tilelens" output channel.
    // `-I`: the working directory (the workspace) is not put on sys.path, so a workspace file named
    // like a stdlib module (`traceback.py`) is never imported by the server itself.
    return { command: python, args: ['-I', '-m', SERVER_MODULE], options: cwd === undefined ? {} : { cwd } };
}

/** The normalized settings record; `interpreter` is the resolved Python that runs the server. */
export function serverSettings(settings: TilelensSettings, interpreter: string): ServerSettings {
    const target = typeof settings.target === 'string' && settings.target.trim() !== ''
        ? settings.target.trim()
        : DEFAULT_TARGET;
    const timeout = settings.workerTimeout;
    const workerTimeout = typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0
        ? timeout
        : DEFAULT_WORKER_TIMEOUT;
    const clients = Array.isArray(settings.clients)
        ? ALL_CLIENTS.filter((name) => (settings.clients as unknown[]).includes(name))
        : [...ALL_CLIENTS];
    return {
        target,
        workerTimeout,
        clients,
        interpreter,
        memoryLimitMb: positiveInteger(settings.memoryLimitMb, DEFAULT_MEMORY_LIMIT_MB),
        allowOutsideWorkspace: settings.allowOutsideWorkspace === true,
        enumerationBudget: positiveInteger(settings.enumerationBudget, DEFAULT_ENUMERATION_BUDGET),
    };
}

function positiveInteger(value: unknown, fallback: number): number {
    return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/** The part of the ms-python.python extension API used here, all optional: old releases lack it. */
export interface PythonExtensionApi {
    ready?: Promise<void>;
    environments?: {
        getActiveEnvironmentPath?(resource?: unknown): { id?: string; path: string } | undefined;
        resolveEnvironment?(
            environment: { id?: string; path: string } | string,
        ): Promise<{ executable?: { uri?: { fsPath: string } } } | undefined>;
    };
}

/** The active environment's python executable, or undefined when the API has none to give. */
export async function pythonFromExtensionApi(
    api: PythonExtensionApi | undefined,
    resource?: unknown,
): Promise<string | undefined> {
    const environments = api?.environments;
    if (environments?.getActiveEnvironmentPath === undefined) {
        return undefined;
    }
    await api?.ready;
    const active = environments.getActiveEnvironmentPath(resource);
    if (active === undefined || !active.path) {
        return undefined;
    }
    // `path` may name an environment folder rather than its python (conda); resolve to the executable.
    const resolved = await environments.resolveEnvironment?.(active);
    return resolved?.executable?.uri?.fsPath || active.path;
}

/** The command line as one would type it, for log lines and error messages. */
export function describeCommand(executable: ServerExecutable): string {
    return [executable.command, ...executable.args]
        .map((part) => (/[\s"'$]/.test(part) ? JSON.stringify(part) : part))
        .join(' ');
}
