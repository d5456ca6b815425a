/** docker logs of a non-TTY container are frames with 8-byte headers; TTY output is plain. */
export function demuxLogs(buf: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length && (buf[i] === 1 || buf[i] === 2) && buf[i + 1] === 0) {
    const len = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + len));
    i += 8 + len;
  }
  return i === 0 ? buf.toString('utf8') : Buffer.concat(parts).toString('utf8');
}
