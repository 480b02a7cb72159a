/**
 * Checks real HTTP answers against the OpenAPI document: the operation is found by path, method and
 * status, and its body and headers are validated with Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses).
 * The whole document is added to Ajv under the id `openapi`, so every schema is compiled as a
 * `$ref` into it and the document's own `#/components/...` references resolve unchanged.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../src/openapi';

const DOCUMENT_ID = 'openapi';

/** The methods an OpenAPI path item can hold an operation for. */
export const HTTP_METHODS = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
] as const;

type Json = { [key: string]: unknown };

/** What a supertest response offers that the checks need. */
export interface HttpAnswer {
  status: number;
  body: unknown;
  /** The body as text (supertest's `text`), for answers that are not JSON. */
  text?: string;
  headers: Record<string, string | string[] | undefined>;
}

/** `~` and `/` escaped for a JSON Pointer segment. */
export function pointerSegment(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value a local JSON Pointer (`#/a/b`) names in the document, or undefined. */
export function valueAt(document: unknown, pointer: string): unknown {
  if (pointer === '#') return document;
  if (!pointer.startsWith('#/'))
    throw new Error(`Only local references are used in the document, got ${pointer}`);
  let value: unknown = document;
  for (const raw of pointer.slice(2).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(value) && !Array.isArray(value)) return undefined;
    value = (value as Json)[segment];
  }
  return value;
}

/** Follows `$ref`s (objects whose only job is to point elsewhere) to the pointer of what they name. */
function follow(document: unknown, pointer: string): string {
  const seen = new Set<string>();
  let current = pointer;
  for (;;) {
    const value = valueAt(document, current);
    if (!isObject(value) || typeof value.$ref !== 'string') return current;
    if (seen.has(current)) throw new Error(`Circular reference at ${current}`);
    seen.add(current);
    current = value.$ref;
  }
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map(
      (error) =>
        `  ${error.instancePath || '(root)'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
    )
    .join('\n');
}

function excerpt(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? 'undefined' : text.length > 2000 ? `${text.slice(0, 2000)}...` : text;
}

export class Contract {
  readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: object = openApiDocument) {
    // A copy through JSON: exactly what GET /api/openapi.json sends.
    this.document = JSON.parse(JSON.stringify(document)) as Json;
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...this.document, $id: DOCUMENT_ID });
  }

  /** The validator of the schema at a local pointer of the document (compiled once). */
  validatorAt(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      if (valueAt(this.document, pointer) === undefined)
        throw new Error(`Nothing at ${pointer} in the document`);
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** Throws with Ajv's errors when `value` does not match the schema at `pointer`. */
  expectMatches(pointer: string, value: unknown, what: string): void {
    const validate = this.validatorAt(pointer);
    if (!validate(value)) {
      throw new Error(
        `${what} does not match ${pointer}:\n${describeErrors(validate.errors)}\nvalue: ${excerpt(value)}`,
      );
    }
  }

  /** Pointer of an operation, or an error naming what is not documented. */
  operationPointer(path: string, method: string): string {
    const pointer = `#/paths/${pointerSegment(path)}/${method.toLowerCase()}`;
    if (!isObject(valueAt(this.document, pointer)))
      throw new Error(`${method.toUpperCase()} ${path} is not documented`);
    return pointer;
  }

  /** The request body a client sends must match the operation's request schema. */
  expectValidRequest(path: string, method: string, body: unknown): void {
    const pointer = `${this.operationPointer(path, method)}/requestBody/content/application~1json/schema`;
    this.expectMatches(pointer, body, `Request body of ${method.toUpperCase()} ${path}`);
  }

  /** Checks a real answer of an operation: its status is documented, its body and headers match. */
  expectDocumented(answer: HttpAnswer, path: string, method: string): void {
    const operation = this.operationPointer(path, method);
    const byStatus = `${operation}/responses/${answer.status}`;
    const fallback = `${operation}/responses/default`;
    const responsePointer =
      valueAt(this.document, byStatus) !== undefined
        ? byStatus
        : valueAt(this.document, fallback) !== undefined
          ? fallback
          : undefined;
    if (!responsePointer) {
      throw new Error(
        `Status ${answer.status} of ${method.toUpperCase()} ${path} is not documented; body: ${excerpt(answer.body)}`,
      );
    }
    this.expectResponse(
      answer,
      follow(this.document, responsePointer),
      `${answer.status} of ${method.toUpperCase()} ${path}`,
    );
  }

  /** Checks an answer against a response of `components.responses` (404, 405: no operation to hang them on). */
  expectComponentResponse(answer: HttpAnswer, name: string): void {
    this.expectResponse(
      answer,
      follow(this.document, `#/components/responses/${pointerSegment(name)}`),
      `${answer.status} (${name})`,
    );
  }

  private expectResponse(answer: HttpAnswer, responsePointer: string, what: string): void {
    const response = valueAt(this.document, responsePointer);
    if (!isObject(response)) throw new Error(`No response object at ${responsePointer}`);
    const content = isObject(response.content) ? response.content : undefined;
    if (content) {
      // JSON, unless the document names another media type for this answer (GET /metrics).
      const contentType = String(answer.headers['content-type'] ?? '');
      const documented = Object.keys(content);
      const mediaType = documented.find((type) =>
        contentType.startsWith(type.split(';')[0] ?? type),
      );
      if (!mediaType) {
        throw new Error(
          `${what}: Content-Type is '${contentType}', documented: ${documented.join(', ')}`,
        );
      }
      if (mediaType !== 'application/json') {
        if (!answer.text) throw new Error(`${what}: a ${mediaType} answer without a text body`);
        return;
      }
      this.expectMatches(
        `${responsePointer}/content/application~1json/schema`,
        answer.body,
        `Body of ${what}`,
      );
    }
    const headers = isObject(response.headers) ? response.headers : {};
    for (const name of Object.keys(headers)) {
      const headerPointer = follow(
        this.document,
        `${responsePointer}/headers/${pointerSegment(name)}`,
      );
      const header = valueAt(this.document, headerPointer) as Json;
      const raw = answer.headers[name.toLowerCase()];
      if (raw === undefined) {
        if (header.required === true)
          throw new Error(`${what}: required header ${name} is missing`);
        continue;
      }
      const text = Array.isArray(raw) ? raw.join(', ') : raw;
      const schema = valueAt(
        this.document,
        follow(this.document, `${headerPointer}/schema`),
      ) as Json;
      // Header values are text; a numeric schema describes the number the text holds.
      const value =
        (schema.type === 'integer' || schema.type === 'number') && /^-?[0-9.]+$/.test(text)
          ? Number(text)
          : text;
      this.expectMatches(`${headerPointer}/schema`, value, `Header ${name} of ${what}`);
    }
  }

  /** Every `$ref` in the document, with where it is. */
  references(): { at: string; ref: string }[] {
    const found: { at: string; ref: string }[] = [];
    const walk = (value: unknown, at: string): void => {
      if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${at}/${index}`));
      else if (isObject(value)) {
        for (const [key, child] of Object.entries(value)) {
          if (key === '$ref' && typeof child === 'string') found.push({ at, ref: child });
          else walk(child, `${at}/${pointerSegment(key)}`);
        }
      }
    };
    walk(this.document, '#');
    return found;
  }
}
