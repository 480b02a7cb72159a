/** A round trip reader that writes down every message the framing hands it, for framing tests. */
import type { MessageFraming, RoundTripReader } from '../src/message-framing';

/**
 * Records into `seen`; at ReadyForQuery it becomes the reader of the next round trip again, as if
 * one more were sent at once.
 */
export function recordingReader(framing: MessageFraming, seen: string[]): RoundTripReader {
  const reader: RoundTripReader = {
    rowDescription: (fields) => seen.push(`rowDescription ${fields.map((f) => f.name).join(',')}`),
    parameterDescription: (types) => seen.push(`parameterDescription ${types.join(',')}`),
    dataRow: (values) => seen.push(`row ${JSON.stringify(values)}`),
    commandComplete: (tag) => seen.push(`commandComplete ${tag}`),
    portalSuspended: () => seen.push('portalSuspended'),
    emptyQuery: () => seen.push('emptyQuery'),
    copyInResponse: () => seen.push('copyInResponse'),
    copyData: (chunk) => seen.push(`copyData ${chunk.toString()}`),
    serverError: (error) => seen.push(`error ${error.code} ${error.message}`),
    readyForQuery: () => {
      seen.push('readyForQuery');
      framing.reader = reader;
    },
    connectionLost: (error) => seen.push(`lost ${error.message}`),
  };
  framing.reader = reader;
  return reader;
}
