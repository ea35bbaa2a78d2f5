import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { repoRoot } from '@streamgate/testkit';
import { parseDockerfile } from './parseDockerfile.js';
import type { Stage } from './parseDockerfile.js';

// No container engine here: these checks read the Dockerfiles. The build steps themselves were
// exercised by hand (pnpm build + deploy + node dist/main.js), see deploy/README.md.
const root = repoRoot();
const dockerDir = join(root, 'deploy', 'docker');
const dockerfiles = readdirSync(dockerDir)
  .filter((f) => f.endsWith('.Dockerfile'))
  .sort();
const workspaceApps = readdirSync(join(root, 'apps'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, 'apps', d.name, 'package.json')))
  .map((d) => d.name);

const PINNED_IMAGE = /^[^:@\s]+(:v?\d+\.\d+\.\d+[^@\s]*)?(@sha256:[0-9a-f]{64})?$/;

function last(stages: Stage[]): Stage {
  const stage = stages.at(-1);
  if (stage === undefined) throw new Error('no FROM');
  return stage;
}

it('has a Dockerfile for every app in the workspace', () => {
  for (const app of workspaceApps) expect(dockerfiles, app).toContain(`${app}.Dockerfile`);
});

it('keeps node_modules and dist out of the build context', () => {
  const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim());
  expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git']));
});

describe.each(dockerfiles)('deploy/docker/%s', (file) => {
  const app = file.replace(/\.Dockerfile$/, '');
  const stages = parseDockerfile(readFileSync(join(dockerDir, file), 'utf8'));
  const final = (): Stage => last(stages);

  it('is multi-stage: builds in one stage, ships only the result in a fresh one', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const earlier = stages.slice(0, -1).map((s) => s.name);
    const copiesFromBuild = final().instructions.some((i) => {
      const from = /--from=(\S+)/.exec(i.args)?.[1];
      return i.keyword === 'COPY' && from !== undefined && earlier.includes(from);
    });
    expect(copiesFromBuild, 'the final stage copies from a build stage').toBe(true);
    expect(
      final()
        .instructions.filter((i) => i.keyword === 'RUN')
        .map((i) => i.args),
      'no build tools run in the final stage',
    ).toEqual([]);
  });

  it('pins every base image to an exact version or digest, never latest', () => {
    const names = new Set(stages.map((s) => s.name).filter((n) => n !== null));
    for (const stage of stages) {
      if (names.has(stage.image)) continue;
      expect(stage.image, 'FROM with a variable cannot be checked').not.toContain('$');
      expect(stage.image).not.toMatch(/:latest(@|$)/);
      expect(stage.image, `${stage.image} needs a version tag (x.y.z) or a digest`).toMatch(PINNED_IMAGE);
      expect(stage.image.includes(':') || stage.image.includes('@'), `${stage.image} is untagged`).toBe(true);
    }
    const adds = stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'ADD' && /https?:\/\//.test(i.args));
    expect(adds, 'ADD from a URL is neither pinned nor verified').toEqual([]);
  });

  it('runs as a numeric non-root user', () => {
    const users = final().instructions.filter((i) => i.keyword === 'USER');
    const user = users.at(-1)?.args.trim() ?? '';
    expect(user, 'the final stage sets USER').toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    const afterUser = final().instructions.slice(final().instructions.findIndex((i) => i === users.at(-1)));
    expect(
      afterUser.some((i) => i.keyword === 'RUN'),
      'nothing runs as root after USER',
    ).toBe(false);
  });

  it('starts node as PID 1 with an exec-form CMD, so SIGTERM reaches the app', () => {
    const start = final()
      .instructions.filter((i) => i.keyword === 'CMD' || i.keyword === 'ENTRYPOINT')
      .at(-1);
    expect(start?.args.trim().startsWith('['), `${start?.keyword ?? 'CMD'} ${start?.args ?? '(missing)'} is not in exec form`).toBe(true);
    const argv: unknown = JSON.parse(start?.args ?? 'null');
    expect(Array.isArray(argv) ? argv[0] : argv).toBe('node');
    if (workspaceApps.includes(app)) {
      const script = Array.isArray(argv) ? String(argv[1]) : '';
      expect(script).toBe('dist/main.js');
      expect(existsSync(join(root, 'apps', app, 'src', 'main.ts')), `apps/${app}/src/main.ts compiles to ${script}`).toBe(true);
    }
  });

  it(`builds @streamgate/${app} and exposes the port its Deployment declares`, () => {
    const runs = stages
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args);
    expect(runs.some((r) => r.includes(`--filter "@streamgate/${app}" deploy --prod`))).toBe(true);
    const copies = stages[0]?.instructions.filter((i) => i.keyword === 'COPY' && !i.args.includes('--from=')) ?? [];
    for (const copy of copies) {
      const sources = copy.args.split(/\s+/).slice(0, -1);
      for (const source of sources) expect(existsSync(join(root, source)), `COPY source ${source}`).toBe(true);
    }
    const data: unknown = parse(readFileSync(join(root, 'deploy', 'base', app, 'deployment.yaml'), 'utf8'));
    if (!Deployment.is(data)) throw new Error(`deploy/base/${app}/deployment.yaml is not a Deployment`);
    const deployment = new Deployment(data);
    const port = deployment.spec?.template.spec?.containers.find((c) => c.name === app)?.ports?.[0]?.containerPort;
    const exposed = final()
      .instructions.find((i) => i.keyword === 'EXPOSE')
      ?.args.trim();
    expect(exposed).toBe(String(port));
  });
});
