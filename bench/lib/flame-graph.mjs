// A static SVG flame graph of folded stacks (`root;child;leaf count` lines), in the layout of
// Brendan Gregg's flamegraph.pl: the root at the bottom, each frame as wide as the time spent in it
// and its callees, children in alphabetical order. Frames narrower than MIN_WIDTH pixels are left
// out. Hovering a frame shows its name, time and share (an SVG <title>).

const WIDTH = 1200;
const FRAME_HEIGHT = 16;
const MIN_WIDTH = 0.3;
const FONT_SIZE = 11;
const CHAR_WIDTH = FONT_SIZE * 0.6;

function treeOf(lines) {
  const root = { name: 'all', total: 0, children: new Map() };
  for (const line of lines) {
    const space = line.lastIndexOf(' ');
    const count = Number(line.slice(space + 1));
    if (!Number.isFinite(count) || count <= 0) continue;
    root.total += count;
    let node = root;
    for (const name of line.slice(0, space).split(';')) {
      let child = node.children.get(name);
      if (!child) {
        child = { name, total: 0, children: new Map() };
        node.children.set(name, child);
      }
      child.total += count;
      node = child;
    }
  }
  return root;
}

const escape = (text) =>
  text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');

/** A warm colour from the frame's name, stable between graphs. */
function colourOf(name) {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) >>> 0;
  const node = name.includes('node_modules') || name.includes('node:');
  const base = node ? [90, 140, 220] : [230, 110, 40];
  return `rgb(${base.map((c, i) => Math.min(255, c + ((hash >> (i * 5)) % 40))).join(',')})`;
}

export function flameGraphSvg(lines, title) {
  const root = treeOf(lines);
  const scale = WIDTH / Math.max(root.total, 1);
  const frames = [];
  let depth = 0;
  const place = (node, x, level) => {
    const width = node.total * scale;
    if (width < MIN_WIDTH) return;
    depth = Math.max(depth, level);
    frames.push({ node, x, level, width });
    let childX = x;
    for (const child of [...node.children.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      place(child, childX, level + 1);
      childX += child.total * scale;
    }
  };
  place(root, 0, 0);
  const height = (depth + 1) * FRAME_HEIGHT + 40;
  const body = frames
    .map(({ node, x, level, width }) => {
      const y = height - (level + 1) * FRAME_HEIGHT - 10;
      const share = ((100 * node.total) / root.total).toFixed(2);
      const fits = Math.floor((width - 4) / CHAR_WIDTH);
      const label =
        fits >= 3
          ? node.name.length > fits
            ? `${node.name.slice(0, fits - 2)}..`
            : node.name
          : '';
      return (
        `<g><title>${escape(node.name)} (${(node.total / 1000).toFixed(1)} ms, ${share}%)</title>` +
        `<rect x="${x.toFixed(2)}" y="${y}" width="${width.toFixed(2)}" height="${FRAME_HEIGHT - 1}" fill="${colourOf(node.name)}"/>` +
        (label
          ? `<text x="${(x + 3).toFixed(2)}" y="${y + FRAME_HEIGHT - 4}">${escape(label)}</text>`
          : '') +
        '</g>'
      );
    })
    .join('\n');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="${FONT_SIZE}">\n` +
    `<rect width="100%" height="100%" fill="#fafafa"/>\n` +
    `<text x="${WIDTH / 2}" y="18" text-anchor="middle" font-size="14">${escape(title)}</text>\n` +
    `${body}\n</svg>\n`
  );
}
