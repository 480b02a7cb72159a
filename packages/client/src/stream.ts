/**
 * `sql.stream(text, params)`: a statement's rows as an async iterator, parsed as the other calls
 * parse them, read from sqlgate's NDJSON answer only as the caller takes them (the network holds
 * the rest back). Leaving the loop early ends the request, and sqlgate cancels the statement.
 */
import { errorOfAnswer, SqlgateError } from './errors';
import { rowObjects, type ReadOptions } from './results';
import { parserFor, type ValueParser } from './type-parsers';
import type { Field } from './wire';

/** The lines of an NDJSON body, as they arrive. */
async function* linesOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line !== '') yield line;
        newline = pending.indexOf('\n');
      }
    }
    pending += decoder.decode();
    if (pending !== '') yield pending;
  } finally {
    // Taken no further: the request ends here, and with it the statement.
    await reader.cancel().catch(() => undefined);
  }
}

interface StreamLine {
  statement?: { fields: Field[] };
  row?: (string | null)[];
  error?: { error?: string; cause?: Record<string, unknown>; code?: string };
  done?: { consistencyToken?: unknown };
}

/** The failure an NDJSON `error` line reports, as the whole answer would have reported it. */
function streamedError(error: NonNullable<StreamLine['error']>): SqlgateError {
  const cause = error.cause;
  if (cause && typeof cause.message === 'string') return errorOfAnswer(400, cause);
  return errorOfAnswer(400, { message: error.error ?? 'The statement failed', code: error.code });
}

/**
 * The rows of a streamed answer. `keepToken` learns the consistency token its `done` line carries
 * when the statement may have written on a connection with replicas.
 */
export async function* rowsOf(
  body: ReadableStream<Uint8Array>,
  { arrayMode = false, types }: ReadOptions,
  keepToken: (token: string) => void = () => undefined,
): AsyncGenerator<unknown> {
  let fields: Field[] = [];
  let parsers: ValueParser[] = [];
  for await (const text of linesOf(body)) {
    const line = JSON.parse(text) as StreamLine;
    if (line.statement) {
      fields = line.statement.fields;
      parsers = fields.map((field) => parserFor(field.dataTypeID, types));
    } else if (line.row) {
      const values = line.row.map((value, index) =>
        value === null ? null : (parsers[index] as ValueParser)(value),
      );
      yield arrayMode ? values : rowObjects(fields, [values])[0];
    } else if (line.error) {
      throw streamedError(line.error);
    } else if (line.done !== undefined) {
      const token = line.done?.consistencyToken;
      if (typeof token === 'string' && token !== '') keepToken(token);
      return;
    }
  }
  throw new SqlgateError('The stream of rows was cut before its end', 200);
}
