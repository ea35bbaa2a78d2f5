import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envBool, envEnum, envInt, envList, envText } from './envVars.js';
import { parseEnv, showValue, whenValid } from './parseEnv.js';

const schema = z
  .object({
    PORT: envInt({ fallback: 8080, min: 0, max: 65535, meaning: '0 = any free port', fix: 'set it to a port number' }),
    LIMIT: envInt({ optional: 'for no limit', min: 1, max: 10 }),
    NAME: envText({ required: 'set it to the service name' }),
    DEBUG: envBool({ fallback: false }),
    LEVEL: envEnum(['info', 'debug'], { fallback: 'info' }),
    TAGS: envList({ fallback: [], each: (t) => (/^[a-z]+$/.test(t) ? null : `"${t}" is not lowercase letters; list lowercase words`) }),
    LOW: envInt({ fallback: 1, min: 0, max: 100 }),
    HIGH: envInt({ fallback: 2, min: 0, max: 100 }),
  })
  .superRefine(
    (env, ctx) => {
      if (env.LOW > env.HIGH) ctx.addIssue({ code: 'custom', path: ['LOW'], message: `must not exceed HIGH (${env.HIGH}); lower it` });
    },
    whenValid('LOW', 'HIGH'),
  );

const parse = (env: Record<string, string | undefined>) => parseEnv(schema, env, { app: 'demo', secret: ['NAME'] });

describe('parseEnv', () => {
  it('treats blank as unset: defaults apply, optional stays undefined, never 0', () => {
    expect(parse({ NAME: 'x', PORT: '', LIMIT: '  ', DEBUG: '', LEVEL: '', TAGS: '', LOW: '' })).toEqual({
      ok: true,
      config: { PORT: 8080, LIMIT: undefined, NAME: 'x', DEBUG: false, LEVEL: 'info', TAGS: [], LOW: 1, HIGH: 2 },
    });
  });

  it('refuses decimal fractions, exponents and hex instead of rounding them', () => {
    for (const raw of ['80.5', '1e3', '0x10', '8080abc']) expect(parse({ NAME: 'x', PORT: raw }).ok).toBe(false);
    expect(parse({ NAME: 'x', PORT: ' 8080 ' })).toMatchObject({ ok: true, config: { PORT: 8080 } });
  });

  it('reports every problem, a cross-variable one next to field errors, each with the value and the fix', () => {
    const result = parse({ PORT: 'abc', LIMIT: '11', DEBUG: 'yes', LEVEL: 'loud', TAGS: 'ok,Bad', LOW: '9', HIGH: '3' });
    if (result.ok) throw new Error('expected a refusal');
    expect(result.error.code).toBe('config_invalid');
    expect(result.error.problems.map((p) => p.message)).toEqual([
      'PORT="abc": must be an integer from 0 to 65535 (0 = any free port); set it to a port number or leave it unset for 8080',
      'LIMIT="11": must be an integer from 1 to 10; set it to an integer in that range or leave it unset for no limit',
      'NAME (unset): is required; set it to the service name',
      'DEBUG="yes": must be true or false (or 1 or 0); set one of those or leave it unset for false',
      'LEVEL="loud": must be one of info, debug; set one of those or leave it unset for info',
      'TAGS="ok,Bad": "Bad" is not lowercase letters; list lowercase words',
      'LOW="9": must not exceed HIGH (3); lower it',
    ]);
    expect(result.error.message.split('\n')[0]).toBe('invalid demo configuration (7 problems):');
  });

  it('shows no secret and masks URL credentials', () => {
    expect(showValue('NAME', 'hunter2', ['NAME'])).toBe('NAME=<7 characters, not shown>');
    expect(showValue('URL', 'redis://user:pw@host:6379')).toBe('URL="redis://<credentials>@host:6379"');
    expect(showValue('URLS', 'redis://r0,redis://u:p/w@r1, redis://:p@ss@r2')).toBe(
      'URLS="redis://r0,redis://<credentials>@r1, redis://<credentials>@r2"',
    );
    // Mistyped with one slash or none, the URL is refused, and its message must not show it.
    expect(showValue('URL', 'redis:/u:s3cretpw@127.0.0.1:1/0')).toBe('URL="redis:/<credentials>@127.0.0.1:1/0"');
    expect(showValue('URL', 'u:s3cretpw@127.0.0.1:1/0')).toBe('URL="<credentials>@127.0.0.1:1/0"');
    expect(showValue('URL', 'redis://host:6379/0')).toBe('URL="redis://host:6379/0"');
    expect(showValue('X', undefined)).toBe('X (unset)');
    expect(showValue('X', 'a'.repeat(200))).toHaveLength('X=""'.length + 120 + 1);
  });
});
