// Finds class fields that code outside the class may reassign: a property declared without
// `readonly` that is not private (`#name` or `private`), and constructor parameter properties
// declared `public` or `protected` without `readonly`. State belongs to the class that owns it
// (CONTRIBUTING: no public reassignable fields); `publicMutableFields.test.mjs` keeps it at zero.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import process from 'node:process';
import ts from 'typescript';

/**
 * Production sources: apps/<x>/src and packages/<x>/src, without tests and `testing/` fakes.
 * @param {string} root @returns {string[]}
 */
export function productionSources(root) {
  /** @type {string[]} */
  const files = [];
  for (const top of ['apps', 'packages']) {
    for (const entry of readdirSync(join(root, top), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(root, top, entry.name, 'src'), files);
    }
  }
  return files.map((file) => relative(root, file).split(sep).join('/')).sort();
}

/** @param {string} dir @param {string[]} files */
function walk(dir, files) {
  /** @type {import('node:fs').Dirent[]} */
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') return; // a package without src/
    throw error;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'testing' && entry.name !== 'node_modules') walk(path, files);
    } else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      files.push(path);
    }
  }
}

/** @param {ts.Node} node @param {ts.SyntaxKind} kind */
function has(node, kind) {
  if (!ts.canHaveModifiers(node)) return false;
  return (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

/**
 * Each reassignable field in one source text, as `path:line Class.field`.
 * @param {string} path @param {string} text @returns {string[]}
 */
export function findPublicMutableFields(path, text) {
  const source = ts.createSourceFile(
    path,
    text,
    ts.ScriptTarget.Latest,
    true,
    path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  /** @type {string[]} */
  const found = [];
  /** @param {ts.ClassLikeDeclaration} cls @param {ts.Node} member @param {string} name */
  const report = (cls, member, name) => {
    const line = source.getLineAndCharacterOfPosition(member.getStart(source)).line + 1;
    found.push(`${path}:${line} ${cls.name?.text ?? '(anonymous class)'}.${name}`);
  };
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      for (const member of node.members) {
        if (ts.isPropertyDeclaration(member)) {
          if (ts.isPrivateIdentifier(member.name)) continue;
          if (has(member, ts.SyntaxKind.ReadonlyKeyword) || has(member, ts.SyntaxKind.PrivateKeyword)) continue;
          report(node, member, member.name.getText(source));
        } else if (ts.isConstructorDeclaration(member)) {
          for (const param of member.parameters) {
            const exposed = has(param, ts.SyntaxKind.PublicKeyword) || has(param, ts.SyntaxKind.ProtectedKeyword);
            if (exposed && !has(param, ts.SyntaxKind.ReadonlyKeyword)) report(node, param, param.name.getText(source));
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every reassignable field in the production sources under `root`. @param {string} root @returns {string[]} */
export function publicMutableFieldsIn(root) {
  return productionSources(root).flatMap((path) => findPublicMutableFields(path, readFileSync(join(root, path), 'utf8')));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const found = publicMutableFieldsIn(process.cwd());
  process.stdout.write(found.map((line) => `${line}\n`).join('') + `${found.length} public reassignable field(s)\n`);
  process.exitCode = found.length === 0 ? 0 : 1;
}
