/**
 * The status bar item's model: idle, analysing (a document was opened or saved and its diagnostics
 * have not come back yet), the result of the file in the active editor (else the last result), or a
 * server that is not running. Plain data: the
 * extension feeds it events and renders `render()`; no `vscode` import, so plain Node tests it.
 */

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

export interface DiagnosticCounts {
    errors: number;
    warnings: number;
    other: number;
}

export interface StatusView {
    text: string;
    tooltip: string;
    severity: 'normal' | 'warning' | 'error';
}

export interface LastResult {
    file: string;
    counts: DiagnosticCounts;
}

/** Counts by severity name (the extension maps vscode.DiagnosticSeverity onto these names). */
export function countDiagnostics(severities: readonly ('error' | 'warning' | 'information' | 'hint')[]): DiagnosticCounts {
    const counts = { errors: 0, warnings: 0, other: 0 };
    for (const severity of severities) {
        if (severity === 'error') {
            counts.errors += 1;
        } else if (severity === 'warning') {
            counts.warnings += 1;
        } else {
            counts.other += 1;
        }
    }
    return counts;
}

function plural(n: number, word: string): string {
    return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function describeCounts(counts: DiagnosticCounts): string {
    const parts = [];
    if (counts.errors > 0) {
        parts.push(plural(counts.errors, 'error'));
    }
    if (counts.warnings > 0) {
        parts.push(plural(counts.warnings, 'warning'));
    }
    return parts.length > 0 ? parts.join(', ') : 'clean';
}

export class StatusModel {
    private readonly servers = new Map<string, ServerState>();
    private readonly analysing = new Set<string>();
    private last: LastResult | undefined;
    private readonly results = new Map<string, LastResult>();
    private active: string | undefined;
    private failure: string | undefined;

    /** A server (one per top-level folder) changed state. */
    server(key: string, state: ServerState, why?: string): void {
        this.servers.set(key, state);
        if (state === 'failed') {
            this.failure = why;
        }
        if (state === 'stopped' || state === 'failed') {
            // Its documents will not be answered by this server any more.
            this.analysing.clear();
        }
    }

    forget(key: string): void {
        this.servers.delete(key);
    }

    /** A document was opened or saved: the server analyses it now. */
    started(uri: string): void {
        this.analysing.add(uri);
    }

    /** The server published diagnostics for `uri`: its analysis is over. */
    finished(uri: string, file: string, counts: DiagnosticCounts): void {
        this.analysing.delete(uri);
        this.last = { file, counts };
        this.results.set(uri, this.last);
    }

    /** A document was closed: its analysis, if any, is no longer awaited, and its result is gone. */
    closed(uri: string): void {
        this.analysing.delete(uri);
        this.results.delete(uri);
    }

    /** The active editor shows `uri` (undefined: no editor): the item shows that file's result. */
    focus(uri: string | undefined): void {
        this.active = uri;
    }

    render(): StatusView {
        const states = [...this.servers.values()];
        if (states.includes('failed')) {
            return {
                text: '$(error) TileLens: not running',
                tooltip: `The TileLens server did not start${this.failure ? `: ${this.failure}` : ''}. Click for the output.`,
                severity: 'error',
            };
        }
        if (states.length > 0 && states.every((s) => s === 'stopped')) {
            return { text: '$(circle-slash) TileLens: stopped', tooltip: 'The TileLens server is stopped. Click for the output.', severity: 'warning' };
        }
        if (states.includes('starting')) {
            return { text: '$(sync~spin) TileLens: starting', tooltip: 'Starting the TileLens server. Click for the output.', severity: 'normal' };
        }
        if (this.analysing.size > 0) {
            const n = this.analysing.size;
            return {
                text: `$(sync~spin) TileLens: analysing${n > 1 ? ` ${n} files` : ''}`,
                tooltip: 'Compiling the declared launches and checking their accesses. Click for the output.',
                severity: 'normal',
            };
        }
        if (this.last === undefined) {
            return { text: '$(check) TileLens: idle', tooltip: 'No kernel file analysed yet: open or save one. Click for the output.', severity: 'normal' };
        }
        const shown = (this.active !== undefined ? this.results.get(this.active) : undefined) ?? this.last;
        const { file, counts } = shown;
        const summary = describeCounts(counts);
        const icon = counts.errors > 0 ? '$(error)' : counts.warnings > 0 ? '$(warning)' : '$(check)';
        return {
            text: `${icon} TileLens: ${summary}`,
            tooltip: `${shown === this.last ? 'Last analysis' : 'This file'}: ${file}: ${summary}. Click for the output.`,
            severity: counts.errors > 0 ? 'error' : counts.warnings > 0 ? 'warning' : 'normal',
        };
    }
}
