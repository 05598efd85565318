// Checks `npm pack` tarballs before anyone installs them: each holds the files its package.json
// exports (and its bin), names a license, and depends on sibling @callgate packages by their
// exact versions, so the tarballs installed together satisfy each other without the registry.
//
//   node scripts/check-packs.mjs <folder of .tgz> <workspace folder>...
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [folder, ...workspaces] = process.argv.slice(2);
const manifests = workspaces.map((workspace) =>
  JSON.parse(readFileSync(join(workspace, 'package.json'), 'utf8')),
);
const versions = new Map(manifests.map((manifest) => [manifest.name, manifest.version]));
const problems = [];

/** Every file path a package.json points at through `exports` (not `source`, which is for this repository) and `bin`. */
function pointedAt(manifest) {
  const paths = [];
  const walk = (value, condition) => {
    if (typeof value === 'string') {
      if (condition !== 'source') paths.push(value);
    } else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) walk(inner, key);
    }
  };
  walk(manifest.exports);
  walk(manifest.bin);
  return paths.map((path) => path.replace(/^\.\//, ''));
}

for (const manifest of manifests) {
  if (manifest.private) continue;
  const tarball = join(folder, `${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}.tgz`);
  let files;
  try {
    files = new Set(
      execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((path) => path.replace(/^package\//, '')),
    );
  } catch (error) {
    problems.push(`${manifest.name}: no tarball ${tarball} (${error.message.split('\n')[0]})`);
    continue;
  }
  for (const path of pointedAt(manifest)) {
    if (!files.has(path)) problems.push(`${manifest.name}: exports ${path}, which its tarball does not hold`);
  }
  if (!manifest.license) problems.push(`${manifest.name}: no license in package.json`);
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (!name.startsWith('@callgate/')) continue;
      if (!versions.has(name)) problems.push(`${manifest.name}: ${field} ${name} is no workspace package`);
      else if (range !== versions.get(name))
        problems.push(
          `${manifest.name}: ${field} ${name}@${range}, but the sibling is ${versions.get(name)}`,
        );
    }
  }
}
if (problems.length > 0) {
  console.error(`package check FAILED:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log(
  `${manifests.length} tarballs hold what they export; @callgate dependencies name sibling versions`,
);
