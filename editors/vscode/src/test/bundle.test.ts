import assert = require('node:assert/strict');
import Module = require('node:module');
import * as path from 'node:path';
import { test } from 'node:test';
import { installStubs } from './stubs';

// The .vsix ships dist/extension.js alone (no node_modules): it must load with nothing but `vscode`
// and Node's own modules, and export the entry points VS Code calls.
test('the esbuild bundle is self-contained and exports activate and deactivate', () => {
    installStubs();
    const bundle = path.join(__dirname, '..', '..', 'dist', 'extension.js');
    const requested: string[] = [];
    const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
    const previous = loader._load;
    loader._load = function (request: string, parent: unknown, isMain: boolean) {
        if ((parent as { filename?: string } | undefined)?.filename === bundle) {
            requested.push(request);
        }
        return previous.call(this, request, parent, isMain);
    };
    try {
        const extension = require(bundle) as Record<string, unknown>;
        assert.equal(typeof extension.activate, 'function');
        assert.equal(typeof extension.deactivate, 'function');
    } finally {
        loader._load = previous;
    }
    const foreign = requested.filter((name) => name !== 'vscode' && !Module.isBuiltin(name));
    assert.deepEqual(foreign, [], 'the bundle requires packages that the .vsix does not carry');
    assert.ok(requested.includes('vscode'));
});
