import { describe, expect, it } from 'vitest';
import { diffRenders } from './diffRenders.js';

const RENDER = `apiVersion: v1
kind: Namespace
metadata:
  name: streamgate
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: auth
  namespace: streamgate
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: auth
          image: ghcr.io/streamgate/auth:0.1.0
`;

describe('diffRenders', () => {
  it('finds nothing between a render and itself', () => {
    expect(diffRenders(RENDER, RENDER)).toEqual([]);
  });

  it('ignores what is only formatting: comments, key order, quoting', () => {
    const reformatted = `# GENERATED header
kind: "Namespace"
apiVersion: v1
metadata: { name: streamgate }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  namespace: 'streamgate'
  name: auth
spec:
  template:
    spec:
      containers:
        - image: "ghcr.io/streamgate/auth:0.1.0"
          name: auth
  replicas: 3
`;
    expect(diffRenders(reformatted, RENDER)).toEqual([]);
  });

  it('names the object and the first field that changed', () => {
    const stale = RENDER.replace('replicas: 3', 'replicas: 2');
    expect(diffRenders(stale, RENDER)).toEqual(['apps/v1 Deployment streamgate/auth: spec.replicas: committed 2, fresh 3']);
    const retagged = RENDER.replace('auth:0.1.0', 'auth:0.2.0');
    expect(diffRenders(RENDER, retagged)).toEqual([
      'apps/v1 Deployment streamgate/auth: spec.template.spec.containers[0].image: committed "ghcr.io/streamgate/auth:0.1.0", fresh "ghcr.io/streamgate/auth:0.2.0"',
    ]);
  });

  it('reports objects added to or removed from the overlay', () => {
    const [namespaceOnly = ''] = RENDER.split('---\n');
    expect(diffRenders(namespaceOnly, RENDER)).toEqual(['apps/v1 Deployment streamgate/auth: missing from the committed render']);
    expect(diffRenders(RENDER, namespaceOnly)).toEqual([
      'apps/v1 Deployment streamgate/auth: committed, but the overlay no longer renders it',
    ]);
  });

  it('reports the same objects in another order (the Namespace must come first)', () => {
    const [namespace = '', deployment = ''] = RENDER.split('---\n');
    const differences = diffRenders(`${deployment}---\n${namespace}`, RENDER);
    expect(differences).toHaveLength(1);
    expect(differences[0]).toMatch(/^same objects in another order/);
  });

  it('reports a committed render that is not YAML instead of throwing', () => {
    expect(diffRenders('kind: [unclosed', RENDER)[0]).toMatch(/^the committed render is not valid YAML/);
  });
});
