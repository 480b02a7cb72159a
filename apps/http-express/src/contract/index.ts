/**
 * The HTTP contract, written once: the route table, the request and response bodies as JSON
 * Schema, the reading of request bodies into core's typed requests, and the OpenAPI document's
 * info, tags and examples.
 */
export * from './request-schemas';
export * from './request-bodies';
export * from './neon-bodies';
export * from './connection-string';
export * from './unknown-fields';
export * from './configured-targets';
export { OneOf, StringEnum } from './schema-builders';
export * from './responses';
export * from './service-bodies';
export * from './session-bodies';
export * from './routes';
export * from './api';
