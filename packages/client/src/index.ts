/**
 * @sqlgate/client: sqlgate from any runtime with fetch (README.md).
 */
export {};
