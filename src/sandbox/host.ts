// Which host this process reaches published container ports on. The stacks publish ports on the
// Docker host, which is this machine unless DOCKER_HOST names a remote engine (tcp://host:2376).
import { isIP } from 'node:net';

/** The Docker host's address for published ports: DOCKER_HOST's host when it is tcp://, else 127.0.0.1. */
export function dockerHostAddress(dockerHost = process.env.DOCKER_HOST): string {
  const v = dockerHost?.trim();
  if (!v || !/^(tcp|http|https):\/\//i.test(v)) return '127.0.0.1';
  try {
    const h = new URL(v.replace(/^tcp:/i, 'http:')).hostname.replace(/^\[|\]$/g, '');
    return h && h !== 'localhost' ? h : '127.0.0.1';
  } catch {
    return '127.0.0.1';
  }
}

/** http://host:port with an IPv6 host bracketed. */
export function hostUrl(host: string, port: number): string {
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}
