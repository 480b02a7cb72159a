/**
 * The request bodies as JSON Schema with static types, which core's validation of a request reads,
 * and the builders they are written with. The HTTP contract (routes, response bodies, the OpenAPI
 * document's parts) belongs to the HTTP adapter.
 */
export * from './request';
export { OneOf, StringEnum } from './helpers';
export * from './unknown-fields';
