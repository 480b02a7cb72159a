/** @sqlgate/http-express: sqlgate's HTTP JSON service on Express. */
export { createApp, type AppOptions, type ClusterStatistics } from './app';
export {
  startServer,
  createServiceFromConfig,
  type RunningServer,
  type StartServerOptions,
} from './server';
export { loadConfig, ConfigError, type ServerConfig } from './config';
export { httpStatusFor } from './http-status';
export { applyServerV8Settings } from './server-v8-settings';
export {
  createObservability,
  DEFAULT_OBSERVABILITY,
  ServiceMetrics,
  type AppObservability,
  type ObservabilitySettings,
} from './observability';
export {
  readCancelBody,
  readConnectionCheckBody,
  readQueryBody,
  readSessionOpenBody,
  readSessionQueryBody,
  requestOrRefusal,
  type ConfiguredTargets,
} from './contract';
