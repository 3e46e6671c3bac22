import { describe, expect, it } from 'vitest';
import { needsHostList, parseDatabaseHosts, redact } from './hosts.js';

describe('DATABASE_URL with several hosts (libpq form)', () => {
  it('splits the hosts, keeps user, database and the other parameters, and drops target_session_attrs', () => {
    const hosts = parseDatabaseHosts('postgres://kassir:s3cret@h1:5432,h2:5433/kassir?target_session_attrs=read-write&sslmode=disable');
    expect(hosts).toEqual({
      urls: ['postgres://kassir:s3cret@h1:5432/kassir?sslmode=disable', 'postgres://kassir:s3cret@h2:5433/kassir?sslmode=disable'],
      attrs: 'read-write',
    });
    expect(needsHostList(hosts)).toBe(true);
  });

  it('gives a host without a port the last port named, as libpq does, and reads IPv6 hosts in brackets', () => {
    expect(parseDatabaseHosts('postgresql://h1,h2:6432/db').urls).toEqual(['postgresql://h1:6432/db', 'postgresql://h2:6432/db']);
    expect(parseDatabaseHosts('postgres://[::1]:5433,[fd00::2]/db').urls).toEqual(['postgres://[::1]:5433/db', 'postgres://[fd00::2]:5433/db']);
    expect(parseDatabaseHosts('postgres://a,b/db').urls).toEqual(['postgres://a:5432/db', 'postgres://b:5432/db']);
  });

  it('leaves a single host with no session attribute to node-postgres as it is', () => {
    const hosts = parseDatabaseHosts('postgres://postgres@127.0.0.1:5432/test');
    expect(needsHostList(hosts)).toBe(false);
    expect(hosts.urls).toEqual(['postgres://postgres@127.0.0.1:5432/test']);
  });

  it('takes primary as read-write and refuses attributes that would send writes to a standby', () => {
    expect(parseDatabaseHosts('postgres://h1,h2/db?target_session_attrs=primary').attrs).toBe('read-write');
    expect(() => parseDatabaseHosts('postgres://h1,h2/db?target_session_attrs=prefer-standby')).toThrow(/not supported; Kassir writes/);
  });

  it('never shows the password in messages', () => {
    expect(redact('postgres://kassir:s3cret@h1:5432/kassir')).toBe('postgres://kassir:***@h1:5432/kassir');
  });
});
