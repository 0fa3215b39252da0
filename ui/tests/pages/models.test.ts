// The Models page: list, default, removal and import.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, emit, open, start, waitForCall, type Harness } from './harness';
import { baseFixture } from './fixture';

let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h?.close();
});

describe('models', () => {
  it('lists models and manages the default', async () => {
    const { page, problems, close } = await open(h, baseFixture(), { hash: 'models' });
    const rows = page.getByTestId('model-row');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(0).textContent()).toContain('147 MB');
    expect(await rows.nth(0).getByTestId('model-default').count()).toBe(1);
    expect(await rows.nth(2).textContent()).toContain('voice detection');

    await rows.nth(1).getByTestId('model-set-default').click();
    expect((await waitForCall(page, 'set_default_model'))[0].args).toEqual({ name: 'whisper-small-en' });
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=model-row]')[1]?.querySelector('[data-testid=model-default]') != null,
    );

    await rows.nth(0).getByTestId('model-remove').click();
    await rows.nth(0).getByTestId('model-remove-confirm').click();
    expect((await waitForCall(page, 'remove_model'))[0].args).toEqual({ name: 'whisper-base' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=model-row]').length === 2);
    expect(problems).toEqual([]);
    await close();
  });

  it('imports from the dialog and from a drop', async () => {
    const f = baseFixture();
    f.dialogOpen = '/home/user/models/ggml-large.gguf';
    const { page, close } = await open(h, f, { hash: 'models' });
    await page.getByTestId('model-row').first().waitFor();
    await page.getByTestId('import-file').click();
    expect((await waitForCall(page, 'import_model'))[0].args).toEqual({ path: '/home/user/models/ggml-large.gguf' });
    await page.waitForFunction(() => document.querySelector('[data-name="ggml-large.gguf"]') != null);

    await page.getByTestId('import-folder').click();
    const opens = await waitForCall(page, 'plugin:dialog|open', 2);
    expect((opens[1].args.options as { directory: boolean }).directory).toBe(true);

    await emit(page, 'tauri://drag-drop', { paths: ['/tmp/parakeet'], position: { x: 1, y: 1 } });
    const imports = await waitForCall(page, 'import_model', 3);
    expect(imports[2].args).toEqual({ path: '/tmp/parakeet' });
    expect(await calls(page, 'transcribe_files')).toHaveLength(0);
    await close();
  });

  it('shows import errors', async () => {
    const f = baseFixture();
    f.dialogOpen = '/home/user/notes.txt';
    f.fail = { import_model: 'notes.txt is not a model: expected a GGUF file or a CTranslate2 folder' };
    const { page, close } = await open(h, f, { hash: 'models' });
    await page.getByTestId('import-file').click();
    await page.getByTestId('models-error').waitFor();
    expect(await page.getByTestId('models-error').textContent()).toContain('not a model');
    await close();
  });
});
