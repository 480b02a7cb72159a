/** The HTTP contract, written once: request and response bodies as JSON Schema with static types, and the route table. */
export * from './request';
export * from './responses';
export * from './service-bodies';
export * from './session-bodies';
export * from './routes';
export * from './api';
export * from './unknown-fields';
