/**
 * Builds the OpenAPI 3.1 document served at GET /api/openapi.json from the contract (./contract):
 * the route table (`ROUTES`) and the JSON Schemas of its bodies. Nothing here describes a body by
 * hand, so the document cannot drift from the schemas the service is typed with (docs/interface.md).
 *
 * A schema with an `$id` becomes a named component and is referred to by `$ref`. Request bodies are
 * written inline under the operation: generators such as openapi-typescript make a property with a
 * `default` required when it sits in `components.schemas`, and optional under a `requestBody`.
 */
import {
  API_INFO,
  API_TAGS,
  RESPONSE_HEADERS,
  ROUTES,
  SHARED_RESPONSES,
  STATS_TOKEN_SCHEME,
  type HeaderName,
  type ResponseSpec,
  type RouteSpec,
} from './contract';

type Json = { [keyword: string]: unknown };

/** The document's shape, typed loosely: it is data for clients, not for the code. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: Json;
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Json>>;
  components: Record<'schemas' | 'responses' | 'headers' | 'securitySchemes', Record<string, Json>>;
}

/** A JSON copy of `schema` where every nested named schema is a `$ref`, registered in `schemas`. */
function plain(schema: unknown, schemas: Record<string, Json>): unknown {
  if (Array.isArray(schema)) return schema.map((each) => schemaOrRef(each, schemas));
  if (typeof schema !== 'object' || schema === null) return schema;
  const entries = Object.entries(schema).filter(([key]) => key !== '$id');
  return Object.fromEntries(entries.map(([key, value]) => [key, schemaOrRef(value, schemas)]));
}

function schemaOrRef(schema: unknown, schemas: Record<string, Json>): unknown {
  const id = (schema as { $id?: unknown } | null)?.$id;
  if (typeof id !== 'string') return plain(schema, schemas);
  // Registered before it is converted, so a schema that refers to itself ends.
  if (!(id in schemas)) schemas[id] = {};
  schemas[id] = plain(schema, schemas) as Json;
  return { $ref: `#/components/schemas/${id}` };
}

const headerKey = (name: HeaderName): string => name.replace(/-/g, '');

function response(spec: ResponseSpec, schemas: Record<string, Json>): Json {
  const body = Array.isArray(spec.body)
    ? { oneOf: spec.body.map((each) => schemaOrRef(each, schemas)) }
    : schemaOrRef(spec.body, schemas);
  const headers: Json = {};
  for (const name of spec.headers ?? [])
    headers[name] = { $ref: `#/components/headers/${headerKey(name)}` };
  for (const [name, description] of Object.entries(spec.optionalHeaders ?? {})) {
    const schema = schemaOrRef(RESPONSE_HEADERS[name as HeaderName].schema, schemas);
    headers[name] = { description, schema };
  }
  const otherContent = Object.entries(spec.otherContent ?? {}).map(([mediaType, schema]) => [
    mediaType,
    { schema: schemaOrRef(schema, schemas) },
  ]);
  return {
    description: spec.description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { [spec.mediaType ?? 'application/json']: { schema: body } },
    // Answers only a request that asks for them (Accept, a lone COPY ... TO STDOUT) gets: beside
    // `content`, so that a generated client types the body it gets by default (docs/decisions.md
    // 10.46).
    ...(otherContent.length > 0
      ? { [OTHER_CONTENT_EXTENSION]: Object.fromEntries(otherContent) }
      : {}),
  };
}

/** Where a response lists the bodies a request gets only by asking for them. */
export const OTHER_CONTENT_EXTENSION = 'x-sqlgate-other-content';

/** The `{name}` parts of a route path, as OpenAPI path parameters. */
function pathParametersOf(path: string): Json[] {
  return [...path.matchAll(/\{([A-Za-z]+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    description:
      name === 'sessionId'
        ? 'The sessionId POST /api/sessions answered.'
        : 'The X-Request-Id of the request to cancel.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  }));
}

function operation(route: RouteSpec, schemas: Record<string, Json>): Json {
  const responses = Object.entries(route.responses).map(([status, spec]) => [
    status,
    typeof spec === 'string' ? { $ref: `#/components/responses/${spec}` } : response(spec, schemas),
  ]);
  const request = route.request;
  const parameters = pathParametersOf(route.path);
  return {
    tags: [route.tag],
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    // Both: open by default, a bearer token when STATS_TOKEN is set.
    ...(route.statsToken ? { security: [{}, { statsToken: [] }] } : {}),
    ...(request
      ? {
          requestBody: {
            required: true,
            content: {
              [request.mediaType ?? 'application/json']: {
                schema: plain(request.schema, schemas),
                ...(request.examples ? { examples: request.examples } : {}),
              },
            },
          },
        }
      : {}),
    responses: Object.fromEntries(responses),
  };
}

/**
 * The document for an app mounted at `mountPath` ('' at the root): its `servers` entry is the mount
 * path, so a client generated from it calls the right URLs.
 */
export function buildOpenApiDocument(mountPath = ''): OpenApiDocument {
  const schemas: Record<string, Json> = {};
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method] = operation(route, schemas);
  const responses = Object.fromEntries(
    Object.entries(SHARED_RESPONSES).map(([name, spec]) => [name, response(spec, schemas)]),
  );
  const headers = Object.fromEntries(
    Object.entries(RESPONSE_HEADERS).map(([name, spec]) => [
      headerKey(name as HeaderName),
      { ...spec, schema: schemaOrRef(spec.schema, schemas) },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: API_INFO,
    servers: [{ url: mountPath || '/', description: 'This sqlgate, where it is mounted.' }],
    tags: API_TAGS,
    paths,
    components: {
      schemas,
      responses,
      headers,
      securitySchemes: { statsToken: STATS_TOKEN_SCHEME },
    },
  };
}

/** The document of an app mounted at the root. */
export const openApiDocument: OpenApiDocument = buildOpenApiDocument();
