import assert = require('node:assert/strict');
import { describe, test } from 'node:test';
import { documentSelectorFor, serverFolderFor, serverKey, topLevelFolders } from '../folders';

function folder(fsPath: string, index = 0) {
    return { uri: { fsPath, toString: () => `file://${fsPath}` }, name: fsPath.split('/').pop() ?? fsPath, index };
}

describe('multi-root folders', () => {
    const kernels = folder('/work/kernels', 0);
    const app = folder('/work/app', 1);
    const nested = folder('/work/kernels/vendored', 2);
    const prefix = folder('/work/kernels-old', 3);

    test('each top-level folder gets a server; a nested folder is served by its parent', () => {
        assert.deepEqual(topLevelFolders([kernels, app, nested]).map((f) => f.name), ['kernels', 'app']);
    });

    test('a folder whose name merely starts like another is not nested in it', () => {
        assert.deepEqual(topLevelFolders([kernels, prefix]).map((f) => f.name), ['kernels', 'kernels-old']);
        assert.equal(serverFolderFor('/work/kernels-old/k.py', [kernels, prefix])?.name, 'kernels-old');
    });

    test('a file is served by the top-level folder that holds it, or by none', () => {
        const all = [kernels, app, nested];
        assert.equal(serverFolderFor('/work/kernels/vendored/k.py', all)?.name, 'kernels');
        assert.equal(serverFolderFor('/work/app/main.py', all)?.name, 'app');
        assert.equal(serverFolderFor('/tmp/scratch.py', all), undefined);
    });

    test("a folder's server selects only the Python files under it", () => {
        assert.deepEqual(documentSelectorFor(kernels), [{ scheme: 'file', language: 'python', pattern: '/work/kernels/**/*' }]);
        assert.deepEqual(documentSelectorFor(folder('/w/[x]')), [{ scheme: 'file', language: 'python', pattern: '/w/[[]x[]]/**/*' }]);
    });

    test('without folders one server takes every Python file and untitled buffer', () => {
        assert.deepEqual(documentSelectorFor(undefined).map((s) => s.scheme), ['file', 'untitled']);
        assert.equal(serverKey(undefined), '');
        assert.equal(serverKey(kernels), 'file:///work/kernels');
    });
});
