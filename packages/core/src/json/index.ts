export { RawJson, parseRawJson, parsedOrText } from './raw-json';
export { serializeResponse } from './serialize-response';
export { isJsonText } from './json-text';
