/**
 * The connection the server that served the page offers, when it has a default target (the
 * embedded database of `sqlgate --demo`, docs/decisions.md 10.48): it comes in the page's
 * `sqlgate-connection` meta element as JSON, and the form opens on it, whatever was typed last
 * time; while the form stays on it, requests name no target (request-fields.ts). Pure apart from
 * `pageConnection`; read defensively, like the browser's storage.
 */
import type { ConnectionForm, OfferedConnection } from './request-fields';

/** The connection named by a meta element's content, or undefined when it names none. */
export function connectionOfMeta(
  content: string | null | undefined,
): OfferedConnection | undefined {
  if (!content) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { host, port, user, database, sslMode } = value as Record<string, unknown>;
  const text = (field: unknown) => (typeof field === 'string' && field !== '' ? field : undefined);
  const fields = {
    host: text(host),
    port: typeof port === 'number' && Number.isInteger(port) ? String(port) : undefined,
    user: text(user),
    database: text(database),
    sslMode: text(sslMode),
  };
  if (Object.values(fields).some((field) => field === undefined)) return undefined;
  return fields as OfferedConnection;
}

/** The form with the page's connection in it; every other field as it was. */
export function withPageConnection(
  form: ConnectionForm,
  connection: OfferedConnection | undefined,
): ConnectionForm {
  return connection ? { ...form, ...connection } : form;
}

export function pageConnection(): OfferedConnection | undefined {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="sqlgate-connection"]');
  return connectionOfMeta(meta?.content);
}

/**
 * The names of the connections the server's CONFIG_FILE holds (docs/access.md), from the page's
 * `sqlgate-connection-names` meta element: a JSON array of texts, names only. Anything else is
 * read as no names.
 */
export function connectionNamesOfMeta(content: string | null | undefined): string[] {
  if (!content) return [];
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return [
    ...new Set(value.filter((name): name is string => typeof name === 'string' && name !== '')),
  ];
}

export function pageConnectionNames(): string[] {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="sqlgate-connection-names"]');
  return connectionNamesOfMeta(meta?.content);
}
