/**
 * The HTTP contract, written once: the route table, the response bodies as JSON Schema, and the
 * OpenAPI document's info, tags and examples. The request bodies' schemas are core's, which
 * validates them for library users too.
 */
export * from './responses';
export * from './service-bodies';
export * from './session-bodies';
export * from './routes';
export * from './api';
