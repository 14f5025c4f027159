/**
 * Multi-root workspaces: which workspace folder's server serves a document. One server per
 * top-level folder, each with that folder's settings and Python interpreter; a folder nested inside
 * another is served by the outer one (two servers must never analyse the same file). Plain data:
 * no `vscode` import, so plain Node tests it.
 */

import * as path from 'node:path';

export interface FolderLike {
    uri: { fsPath: string; toString(): string };
    name: string;
    index: number;
}

function normalize(fsPath: string): string {
    const resolved = path.resolve(fsPath);
    return resolved.endsWith(path.sep) ? resolved : resolved + path.sep;
}

function contains(folder: string, file: string): boolean {
    return normalize(file).startsWith(normalize(folder));
}

/** The folders that get a server of their own: those not inside another open folder. */
export function topLevelFolders<F extends FolderLike>(folders: readonly F[]): F[] {
    return folders.filter((folder) => !folders.some(
        (other) => other !== folder && normalize(other.uri.fsPath) !== normalize(folder.uri.fsPath)
            && contains(other.uri.fsPath, folder.uri.fsPath)));
}

/** The top-level folder whose server serves the file at `fsPath`, or undefined (outside every folder). */
export function serverFolderFor<F extends FolderLike>(fsPath: string, folders: readonly F[]): F | undefined {
    return topLevelFolders(folders).find((folder) => contains(folder.uri.fsPath, fsPath));
}

/** The documents a folder's server receives: Python files under it (glob pattern, forward slashes). */
export function documentSelectorFor(folder: FolderLike | undefined): { scheme: string; language: string; pattern?: string }[] {
    if (folder === undefined) {
        // No folder open: one server for every Python file and untitled buffer.
        return [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
        ];
    }
    const base = folder.uri.fsPath.replace(/\\/g, '/').replace(/\/$/, '');
    return [{ scheme: 'file', language: 'python', pattern: `${escapeGlob(base)}/**/*` }];
}

function escapeGlob(text: string): string {
    return text.replace(/[{}[\]*?]/g, (c) => `[${c}]`);
}

/** A stable key per server: the folder's URI, or '' for the folder-less server. */
export function serverKey(folder: FolderLike | undefined): string {
    return folder === undefined ? '' : folder.uri.toString();
}
