// Multipart bodies (src/primitives/http-body.ts) are encoded by Node's FormData/Blob: they parse
// back, with the fields, the file names, types and bytes intact, names with quotes included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { multipartBody, rawBody } from '../../src/primitives/http-body';

async function decode(b: { body: Buffer; contentType: string }): Promise<FormData> {
  return new Response(b.body, { headers: { 'content-type': b.contentType } }).formData();
}

test('multipart: fields then files, binary bytes intact, odd names survive', async () => {
  const bytes = Buffer.from([0, 255, 13, 10, 45, 45, 1, 2, 3]);
  const mp = await multipartBody({ title: 'Q3 "report"', note: 'line1\r\nline2' }, [{ field: 'file', name: 'we"ird name.bin', type: 'application/x-test', bytes }]);
  assert.match(mp.contentType, /^multipart\/form-data; boundary=.+/);
  const form = await decode(mp);
  assert.equal(form.get('title'), 'Q3 "report"');
  assert.equal(form.get('note'), 'line1\r\nline2');
  const f = form.get('file') as File;
  assert.equal(f.type, 'application/x-test');
  assert.equal(f.name, 'we"ird name.bin');
  assert.deepEqual(Buffer.from(await f.arrayBuffer()), bytes);
  assert.ok(mp.body.indexOf('name="title"') < mp.body.indexOf('name="file"'), 'fields before files');
});

test('rawBody: files or multipart: true → multipart; a plain form stays url-encoded', async () => {
  const withFile = await rawBody({ form: { a: 1, b: ['x', 'y'] }, files: [{ field: 'up', filename: 'a.txt', content_type: 'text/plain', content: 'hello' }] });
  const form = await decode(withFile!);
  assert.equal(form.get('a'), '1');
  assert.equal(form.get('b'), '["x","y"]');
  assert.equal(await (form.get('up') as File).text(), 'hello');
  const asMultipart = await rawBody({ form: 'k=v&k2=v2', multipart: true });
  assert.equal((await decode(asMultipart!)).get('k2'), 'v2');
  const plain = await rawBody({ form: { a: 'b c' } });
  assert.deepEqual([plain!.contentType, plain!.body.toString()], ['application/x-www-form-urlencoded', 'a=b+c']);
  assert.equal(await rawBody({}), undefined);
});
