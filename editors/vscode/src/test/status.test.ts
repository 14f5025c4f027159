import assert = require('node:assert/strict');
import { describe, test } from 'node:test';
import { countDiagnostics, describeCounts, StatusModel } from '../status';

const none = { errors: 0, warnings: 0, other: 0 };

describe('StatusModel', () => {
    test('a started server with nothing analysed yet is idle', () => {
        const model = new StatusModel();
        model.server('', 'starting');
        assert.equal(model.render().text, '$(sync~spin) TileLens: starting');
        model.server('', 'running');
        assert.equal(model.render().text, '$(check) TileLens: idle');
    });

    test('an opened document is analysing until its diagnostics arrive', () => {
        const model = new StatusModel();
        model.server('', 'running');
        model.started('file:///ws/add.py');
        assert.equal(model.render().text, '$(sync~spin) TileLens: analysing');
        model.finished('file:///ws/add.py', 'add.py', { errors: 2, warnings: 1, other: 0 });
        const view = model.render();
        assert.equal(view.text, '$(error) TileLens: 2 errors, 1 warning');
        assert.match(String(view.tooltip), /add\.py: 2 errors, 1 warning/);
        assert.equal(view.severity, 'error');
    });

    test('two documents in flight are counted; the last result is shown once both are back', () => {
        const model = new StatusModel();
        model.server('', 'running');
        model.started('a');
        model.started('b');
        assert.equal(model.render().text, '$(sync~spin) TileLens: analysing 2 files');
        model.finished('a', 'a.py', { errors: 1, warnings: 0, other: 0 });
        assert.equal(model.render().text, '$(sync~spin) TileLens: analysing');
        model.finished('b', 'b.py', none);
        assert.equal(model.render().text, '$(check) TileLens: clean');
    });

    test('the result shown is the active editor\'s file, else the last one analysed', () => {
        const model = new StatusModel();
        model.server('', 'running');
        model.finished('file:///ws/buggy.py', 'buggy.py', { errors: 3, warnings: 0, other: 0 });
        model.finished('file:///ws/add.py', 'add.py', none);
        assert.equal(model.render().text, '$(check) TileLens: clean');
        model.focus('file:///ws/buggy.py');
        const view = model.render();
        assert.equal(view.text, '$(error) TileLens: 3 errors');
        assert.match(String(view.tooltip), /This file: buggy\.py: 3 errors/);
        model.focus('file:///ws/notes.md');   // not a file the server analysed: the last result
        assert.equal(model.render().text, '$(check) TileLens: clean');
        model.focus('file:///ws/buggy.py');
        model.closed('file:///ws/buggy.py');
        assert.equal(model.render().text, '$(check) TileLens: clean');
    });

    test('closing a document that is being analysed stops waiting for it', () => {
        const model = new StatusModel();
        model.server('', 'running');
        model.started('a');
        model.closed('a');
        assert.equal(model.render().text, '$(check) TileLens: idle');
    });

    test('a server that failed to start wins over everything else, with the reason in the tooltip', () => {
        const model = new StatusModel();
        model.server('file:///one', 'running');
        model.server('file:///two', 'failed', 'spawn /missing/python ENOENT');
        model.started('a');
        const view = model.render();
        assert.equal(view.text, '$(error) TileLens: not running');
        assert.match(String(view.tooltip), /ENOENT/);
    });

    test('a forgotten server (its folder was removed) no longer counts', () => {
        const model = new StatusModel();
        model.server('file:///gone', 'failed', 'x');
        model.server('file:///kept', 'running');
        model.forget('file:///gone');
        assert.equal(model.render().text, '$(check) TileLens: idle');
    });
});

describe('counts', () => {
    test('information and hints are neither errors nor warnings', () => {
        assert.deepEqual(countDiagnostics(['error', 'hint', 'information', 'warning', 'error']), { errors: 2, warnings: 1, other: 2 });
        assert.equal(describeCounts({ errors: 0, warnings: 0, other: 3 }), 'clean');
        assert.equal(describeCounts({ errors: 1, warnings: 0, other: 0 }), '1 error');
    });
});
