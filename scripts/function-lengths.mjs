// Lists the functions longer than a limit (default 100 lines) and the constructors with more than
// 4 parameters, by the TypeScript syntax tree; a factory's closure counts as a function too. Exits
// non-zero when it lists anything: a long function is a sequence of steps that wants names, and a
// long parameter list an options object.
//
//   node scripts/function-lengths.mjs [limit] <folder>...   (npm run lint:functions)
import ts from 'typescript';
import fs from 'node:fs';
import path from 'node:path';

const MAX_CONSTRUCTOR_PARAMETERS = 4;
const [limit = '100', ...roots] = process.argv.slice(2);

const files = [];
const walk = (dir) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(full);
    } else if (/\.tsx?$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) files.push(full);
  }
};
roots.forEach(walk);

const found = [];
for (const file of files) {
  const source = ts.createSourceFile(
    file,
    fs.readFileSync(file, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const lineOf = (position) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = lineOf(node.getStart());
      const lines = lineOf(node.end) - first + 1;
      const name = node.name
        ? node.name.getText()
        : ts.isVariableDeclaration(node.parent)
          ? node.parent.name.getText()
          : '<anon>';
      if (lines > Number(limit)) found.push(`${lines}\t${file}:${first + 1}\t${name}`);
      if (
        ts.isConstructorDeclaration(node) &&
        node.parameters.length > MAX_CONSTRUCTOR_PARAMETERS
      ) {
        found.push(`ctor(${node.parameters.length})\t${file}:${first + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

if (found.length > 0) {
  console.log(found.sort((a, b) => parseInt(b) - parseInt(a)).join('\n'));
  process.exitCode = 1;
}
