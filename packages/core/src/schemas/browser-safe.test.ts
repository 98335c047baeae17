import { existsSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The subpaths of @thaw/core that client components import must load in a browser: no Node
// API, no database client, no package but the few browser libraries below. This walks each
// entry's module graph from the source (every import and re-export, type-only ones included,
// so that no Prisma type leaks in either) the way the bundler will.

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CORE = resolve(SRC, "..");

/** Packages a browser bundle may take from these modules. */
const BROWSER_PACKAGES = new Set(["zod", "ipaddr.js"]);
const NODE_BUILTINS = new Set(builtinModules);

function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      found.push(node.moduleSpecifier.text);
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require"))
    ) {
      const [argument] = node.arguments;
      found.push(argument && ts.isStringLiteral(argument) ? argument.text : "<computed>");
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) found.push(literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveFile(base: string): string {
  const file = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
  if (!file) throw new Error(`cannot resolve ${base}`);
  return file;
}

/** A workspace package's entry, read from its package.json exports (`.` or `./name`). */
function resolveWorkspace(specifier: string): string {
  const [scope = "", name = "", ...rest] = specifier.split("/");
  const root = join(CORE, "node_modules", scope, name);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports: Record<string, string>;
  };
  const subpath = rest.length === 0 ? "." : `./${rest.join("/")}`;
  const target = manifest.exports[subpath] ?? manifest.exports["./*"]?.replace("*", rest.join("/"));
  if (!target) throw new Error(`${specifier} is not exported`);
  return resolve(root, target);
}

/** Every import the entry's graph makes that a browser could not load, as "file → import". */
function browserProblems(entry: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of specifiersOf(file)) {
      const where = `${file.replace(`${CORE}/`, "")} → ${specifier}`;
      if (specifier.startsWith(".")) pending.push(resolveFile(resolve(dirname(file), specifier)));
      else if (specifier.startsWith("node:") || NODE_BUILTINS.has(specifier))
        problems.push(`${where} (a Node API)`);
      else if (specifier === "@thaw/db" || specifier.startsWith("@thaw/db/"))
        problems.push(`${where} (the database client)`);
      else if (specifier.startsWith("@thaw/")) pending.push(resolveWorkspace(specifier));
      else if (!BROWSER_PACKAGES.has(specifier)) problems.push(`${where} (not a browser package)`);
    }
  }
  return problems;
}

describe("browser-safe subpaths", () => {
  it.each(["@thaw/core/schemas", "@thaw/core/auth"])(
    "%s imports no Node API, database or server package",
    (subpath) => {
      const entry = resolve(SRC, subpath.replace("@thaw/core/", ""), "index.ts");
      expect(browserProblems(entry)).toEqual([]);
    },
  );

  it("finds what a browser cannot load (the server's barrel of deployments)", () => {
    const problems = browserProblems(resolve(SRC, "deployments", "index.ts"));
    expect(problems).toContain("src/deployments/digest-of-ref.ts → node:crypto (a Node API)");
    expect(problems.some((p) => p.includes("→ @thaw/db (the database client)"))).toBe(true);
  });
});
