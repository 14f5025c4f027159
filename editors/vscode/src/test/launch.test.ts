import assert = require('node:assert/strict');
import { describe, test } from 'node:test';
import {
    chooseInterpreter,
    describeCommand,
    expandPath,
    pythonFromExtensionApi,
    serverExecutable,
    serverSettings,
    type PythonExtensionApi,
} from '../launch';

const context = { workspaceFolder: '/ws', home: '/home/me', env: { VENV: '/opt/venv' } };

describe('chooseInterpreter', () => {
    test('the tilelens.interpreter setting wins over the Python extension', () => {
        assert.deepEqual(chooseInterpreter('/usr/bin/python3.12', '/ext/python', context), {
            path: '/usr/bin/python3.12',
            source: 'setting',
        });
    });

    test('an empty setting falls back to the Python extension environment', () => {
        assert.deepEqual(chooseInterpreter('  ', '/ext/bin/python', context), {
            path: '/ext/bin/python',
            source: 'python-extension',
        });
    });

    test('without setting or Python extension it runs python3', () => {
        assert.deepEqual(chooseInterpreter(undefined, undefined, context, 'linux'), {
            path: 'python3',
            source: 'default',
        });
    });

    test('on Windows the fallback is python', () => {
        assert.equal(chooseInterpreter(undefined, undefined, context, 'win32').path, 'python');
    });

    test('a non-string setting is ignored', () => {
        assert.equal(chooseInterpreter(42, '/ext/python', context).source, 'python-extension');
    });

    test('the setting expands workspace and home variables', () => {
        assert.equal(chooseInterpreter('${workspaceFolder}/.venv/bin/python', undefined, context).path, '/ws/.venv/bin/python');
        assert.equal(chooseInterpreter('~/venv/bin/python', undefined, context).path, '/home/me/venv/bin/python');
    });
});

describe('expandPath', () => {
    test('expands ~, ${userHome} and ${env:NAME}', () => {
        assert.equal(expandPath('~', context), '/home/me');
        assert.equal(expandPath('${userHome}/py', context), '/home/me/py');
        assert.equal(expandPath('${env:VENV}/bin/python', context), '/opt/venv/bin/python');
    });

    test('leaves ~user and ${workspaceFolder} without a folder as written', () => {
        assert.equal(expandPath('~other/python', context), '~other/python');
        assert.equal(expandPath('${workspaceFolder}/python', { home: '/h' }), '${workspaceFolder}/python');
    });
});

describe('serverExecutable', () => {
    test('runs the server module over stdio with the chosen python', () => {
        assert.deepEqual(serverExecutable('/venv/bin/python', '/ws'), {
            command: '/venv/bin/python',
            args: ['-I', '-m', 'tilelens_lsp'],
            options: { cwd: '/ws' },
        });
    });

    test('without a workspace folder no cwd is set', () => {
        assert.deepEqual(serverExecutable('python3').options, {});
    });

    test('describeCommand quotes parts with spaces', () => {
        assert.equal(describeCommand(serverExecutable('/my env/python')), '"/my env/python" -I -m tilelens_lsp');
    });
});

describe('serverSettings', () => {
    test('defaults when nothing is configured', () => {
        assert.deepEqual(serverSettings({}, 'python3'), {
            target: 'cuda:89',
            workerTimeout: 30,
            clients: ['footprint', 'sanitizer', 'overflow'],
            interpreter: 'python3',
            memoryLimitMb: 4096,
            allowOutsideWorkspace: false,
            enumerationBudget: 268435456,
        });
    });

    test('passes configured values through', () => {
        assert.deepEqual(
            serverSettings({
                target: 'hip:gfx942', workerTimeout: 5, clients: ['overflow', 'sanitizer'], interpreter: '~/x',
                memoryLimitMb: 8192, allowOutsideWorkspace: true, enumerationBudget: 1000,
            }, '/resolved/python'),
            {
                target: 'hip:gfx942', workerTimeout: 5, clients: ['sanitizer', 'overflow'], interpreter: '/resolved/python',
                memoryLimitMb: 8192, allowOutsideWorkspace: true, enumerationBudget: 1000,
            },
        );
    });

    test('drops unknown clients and keeps an empty list empty', () => {
        assert.deepEqual(serverSettings({ clients: ['bogus', 'footprint'] }, 'p').clients, ['footprint']);
        assert.deepEqual(serverSettings({ clients: [] }, 'p').clients, []);
    });

    test('replaces a non-positive or non-numeric timeout and a blank target by the defaults', () => {
        assert.equal(serverSettings({ workerTimeout: 0 }, 'p').workerTimeout, 30);
        assert.equal(serverSettings({ workerTimeout: '12' }, 'p').workerTimeout, 30);
        assert.equal(serverSettings({ target: ' ' }, 'p').target, 'cuda:89');
    });

    test('a memory limit or budget that is not a positive integer, or a non-boolean flag, gets the default', () => {
        const odd = serverSettings({ memoryLimitMb: -1, enumerationBudget: 2.5, allowOutsideWorkspace: 'yes' }, 'p');
        assert.deepEqual([odd.memoryLimitMb, odd.enumerationBudget, odd.allowOutsideWorkspace], [4096, 268435456, false]);
    });
});

describe('pythonFromExtensionApi', () => {
    test('absent API gives nothing', async () => {
        assert.equal(await pythonFromExtensionApi(undefined), undefined);
        assert.equal(await pythonFromExtensionApi({}), undefined);
    });

    test('resolves the active environment to its executable', async () => {
        const seen: unknown[] = [];
        const api: PythonExtensionApi = {
            ready: Promise.resolve(),
            environments: {
                getActiveEnvironmentPath: (resource) => {
                    seen.push(resource);
                    return { id: 'conda-env', path: '/conda/envs/triton' };
                },
                resolveEnvironment: async () => ({ executable: { uri: { fsPath: '/conda/envs/triton/bin/python' } } }),
            },
        };
        assert.equal(await pythonFromExtensionApi(api, 'file:///ws'), '/conda/envs/triton/bin/python');
        assert.deepEqual(seen, ['file:///ws']);
    });

    test('falls back to the active path when it cannot be resolved', async () => {
        const api: PythonExtensionApi = {
            environments: {
                getActiveEnvironmentPath: () => ({ id: 'x', path: '/venv/bin/python' }),
                resolveEnvironment: async () => undefined,
            },
        };
        assert.equal(await pythonFromExtensionApi(api), '/venv/bin/python');
    });
});
