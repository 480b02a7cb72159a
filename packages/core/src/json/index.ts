export { RawJson, parseRawJson } from './raw-json';
export { serializeResponse } from './serialize-response';
export { isJsonText } from './json-text';
