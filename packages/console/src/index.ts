/**
 * The console's built assets, for a server to answer (docs/decisions.md 10.31). The page lives at
 * the mount point (`/`), everything it loads under `console/`, all named relative to the page so
 * the console works under any mount path.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface ConsoleAsset {
  body: Buffer;
  /** The body gzipped at build time, when the build made a copy. */
  gzipped?: Buffer;
  contentType: string;
  /** Hashed names never change content; the page and the icon are asked for again each time. */
  immutable: boolean;
}

/**
 * A connection the server offers the console, which its form opens on (the server's default
 * target, docs/decisions.md 10.48). Never a password: the page is shown to whoever reaches it.
 */
export interface ConsoleConnection {
  host: string;
  port: number;
  user: string;
  database: string;
  sslMode: string;
}

export interface ConsoleAssets {
  /**
   * The page, for a nonce of its response (see `consoleContentSecurityPolicy`), naming the
   * connection the form opens on, if any, and the names of the server's named connections
   * (CONFIG_FILE, docs/access.md), which its key login offers: names only, never their URLs.
   */
  page(nonce: string, connection?: ConsoleConnection, connectionNames?: readonly string[]): Buffer;
  /** Files the page loads, by name (the part after `console/`). */
  files: ReadonlyMap<string, ConsoleAsset>;
}

/**
 * The policy the page is served with: scripts, styles and requests from sqlgate itself only, no
 * inline script, no plugin, no framing, no form posting anywhere. The editor writes its styles into
 * style elements, so style elements carrying the response's nonce are allowed; the page hands the
 * nonce to the editor (the stylesheet link carries it).
 */
export function consoleContentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data: blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Text as the value of a quoted HTML attribute: nothing in it can end the attribute. */
function attributeText(text: string): string {
  return text.replace(/[&"'<>]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** A nonce as CSP wants it: base64 of random bytes (checked, since it is written into the page). */
const NONCE = /^[A-Za-z0-9+/]{16,}={0,2}$/;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

/** The page's content type. */
export const CONSOLE_PAGE_CONTENT_TYPE = CONTENT_TYPES['.html'] as string;

const HASHED_NAME = /^console-[A-Z0-9]+\.(?:js|css)$/;

/**
 * The directory esbuild wrote to when the package was built. Named from the package's root, so the
 * compiled module (dist/) and its source (src/, in tests) find the same files.
 */
export const CONSOLE_ASSETS_DIR = path.join(__dirname, '..', 'dist', 'assets');

/**
 * Reads the built assets into memory once (a few hundred KiB). Throws when the package was not
 * built, naming the command that builds it.
 */
export function loadConsoleAssets(directory = CONSOLE_ASSETS_DIR): ConsoleAssets {
  if (!fs.existsSync(path.join(directory, 'index.html'))) {
    throw new Error(
      `The console's assets are missing from ${directory}: build them with npm run build -w @sqlgate/console`,
    );
  }
  const files = new Map<string, ConsoleAsset>();
  for (const name of fs.readdirSync(directory)) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (name === 'index.html' || contentType === undefined) continue;
    const gzipped = path.join(directory, `${name}.gz`);
    files.set(name, {
      body: fs.readFileSync(path.join(directory, name)),
      ...(fs.existsSync(gzipped) ? { gzipped: fs.readFileSync(gzipped) } : {}),
      contentType,
      immutable: HASHED_NAME.test(name),
    });
  }
  const template = fs.readFileSync(path.join(directory, 'index.html'), 'utf8');
  const page = (
    nonce: string,
    connection?: ConsoleConnection,
    connectionNames: readonly string[] = [],
  ): Buffer => {
    if (!NONCE.test(nonce)) throw new Error('A nonce must be base64 of at least 12 random bytes');
    const { host, port, user, database, sslMode } = connection ?? {};
    const named = connection ? JSON.stringify({ host, port, user, database, sslMode }) : '';
    const names = connectionNames.length > 0 ? JSON.stringify([...connectionNames]) : '';
    return Buffer.from(
      template
        .replaceAll('{{nonce}}', nonce)
        .replaceAll('{{connectionNames}}', attributeText(names))
        .replaceAll('{{connection}}', attributeText(named)),
    );
  };
  return { page, files };
}
