/**
 * Drift check between the SDK and the service's OpenAPI document (GET /openapi.json, generated from
 * the route schemas): every `/v1` operation of the document has an SDK method and every SDK method
 * an operation (src/operations.ts); each method's path parameters are named as in the path; and its
 * `body` and `query` parameters and its answer type have the schema's property names, required-ness,
 * nullability and primitive kinds, all the way down. The SDK's types are read with the TypeScript
 * compiler, so the check covers the signatures users actually see.
 *
 * Run by test/sdk.test.ts against a live service; by hand: `npx tsx sdk/scripts/check-openapi.ts
 * [http://localhost:8080 | openapi.json]` (exit code 1 on drift).
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { OPERATIONS, type OperationName } from '../src/operations.js';

/** The part of a JSON Schema (OpenAPI 3.0/3.1 dialect) that the check reads. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  format?: string;
  contentMediaType?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: Schema;
}

interface MediaTypes {
  content?: Record<string, { schema?: Schema }>;
}

interface OpenApiOperation {
  parameters?: Parameter[];
  requestBody?: MediaTypes & { required?: boolean };
  responses?: Record<string, MediaTypes>;
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
  security?: unknown[];
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const SDK_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

let compiled: { checker: ts.TypeChecker; client: ts.ClassDeclaration; clientType: ts.Type } | undefined;

/** The SDK compiled with its own tsconfig (once per process): its checker and the KassirClient class. */
function compileSdk() {
  if (compiled) return compiled;
  const configPath = join(SDK_DIR, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, SDK_DIR);
  const entry = join(SDK_DIR, 'src', 'client.ts');
  const program = ts.createProgram({ rootNames: [entry], options: { ...parsed.options, noEmit: true } });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const client = source?.statements.find((node): node is ts.ClassDeclaration => ts.isClassDeclaration(node) && node.name?.text === 'KassirClient');
  if (!client?.name) throw new Error('KassirClient is not declared in sdk/src/client.ts');
  const symbol = checker.getSymbolAtLocation(client.name);
  if (!symbol) throw new Error('KassirClient has no symbol');
  compiled = { checker, client, clientType: checker.getDeclaredTypeOfSymbol(symbol) };
  return compiled;
}

/** Problems found between `document` and the SDK; empty when they agree. */
export function checkOpenApi(document: OpenApiDocument): string[] {
  const { checker, client, clientType } = compileSdk();
  const problems: string[] = [];
  const typeOf = (symbol: ts.Symbol) => checker.getTypeOfSymbolAtLocation(symbol, client);

  const resolve = (schema: Schema): Schema => {
    let current = schema;
    for (let depth = 0; current.$ref !== undefined; depth++) {
      const name = current.$ref.replace(/^#\/components\/schemas\//, '');
      const target = document.components?.schemas?.[name];
      if (!target || depth > 20) throw new Error(`cannot resolve ${current.$ref}`);
      current = target;
    }
    if (current.allOf?.length === 1) return resolve({ ...current, allOf: undefined, ...current.allOf[0] });
    return current;
  };

  /** The schema without its null alternative, and whether it had one (3.0 `nullable`, 3.1 type arrays, anyOf with null). */
  const splitNull = (input: Schema): { schema: Schema; nullable: boolean } => {
    const schema = resolve(input);
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives) {
      const resolved = alternatives.map(resolve);
      const nonNull = resolved.filter((alt) => alt.type !== 'null');
      const nullable = nonNull.length < resolved.length || schema.nullable === true;
      if (nonNull.length === 1) return { schema: splitNull(nonNull[0]!).schema, nullable };
      // A union of constants of one type (TypeBox's Union of Literals): that type, with those values.
      const types = new Set(nonNull.map((alt) => alt.type));
      const [only] = types;
      if (types.size === 1 && typeof only === 'string' && nonNull.every((alt) => alt.const !== undefined || alt.enum !== undefined)) {
        return { schema: { type: only, enum: nonNull.flatMap((alt) => alt.enum ?? [alt.const]) }, nullable };
      }
      return { schema, nullable: schema.nullable === true };
    }
    if (Array.isArray(schema.type)) {
      const types = schema.type.filter((type) => type !== 'null');
      return { schema: { ...schema, type: types.length === 1 ? types[0] : types }, nullable: types.length < schema.type.length };
    }
    return { schema, nullable: schema.nullable === true };
  };

  const compare = (type: ts.Type, input: Schema, where: string): void => {
    const { schema, nullable } = splitNull(input);
    const members = type.isUnion() ? type.types : [type];
    const sdkNullable = members.some((member) => member.flags & ts.TypeFlags.Null);
    const rest = members.filter((member) => !(member.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
    if (nullable !== sdkNullable) problems.push(`${where}: ${nullable ? 'nullable in OpenAPI, not in the SDK' : 'nullable in the SDK, not in OpenAPI'}`);
    const shown = checker.typeToString(type);
    const every = (flags: ts.TypeFlags) => rest.length > 0 && rest.every((member) => member.flags & flags);
    switch (schema.type) {
      case 'string': {
        if (!every(ts.TypeFlags.StringLike)) {
          problems.push(`${where}: string in OpenAPI, ${shown} in the SDK`);
          return;
        }
        // Both enumerate the values (an enum in the schema, a union of literals in the SDK): the same ones.
        const values = schema.enum ?? (schema.const === undefined ? undefined : [schema.const]);
        if (values && rest.every((member) => member.isStringLiteral())) {
          const sdkValues = rest.map((member) => (member as ts.StringLiteralType).value).sort();
          const schemaValues = values.map(String).sort();
          if (sdkValues.join('|') !== schemaValues.join('|'))
            problems.push(`${where}: ${schemaValues.join(' | ')} in OpenAPI, ${sdkValues.join(' | ')} in the SDK`);
        }
        return;
      }
      case 'number':
      case 'integer':
        if (!every(ts.TypeFlags.NumberLike)) problems.push(`${where}: number in OpenAPI, ${shown} in the SDK`);
        return;
      case 'boolean':
        if (!every(ts.TypeFlags.BooleanLike)) problems.push(`${where}: boolean in OpenAPI, ${shown} in the SDK`);
        return;
      case 'array': {
        const [array] = rest;
        if (rest.length !== 1 || !array || !checker.isArrayType(array)) {
          problems.push(`${where}: array in OpenAPI, ${shown} in the SDK`);
          return;
        }
        const [element] = checker.getTypeArguments(array as ts.TypeReference);
        if (element && schema.items) compare(element, schema.items, `${where}[]`);
        return;
      }
      case 'object': {
        const [object] = rest;
        if (rest.length !== 1 || !object || !(object.flags & ts.TypeFlags.Object) || checker.isArrayType(object)) {
          problems.push(`${where}: object in OpenAPI, ${shown} in the SDK`);
          return;
        }
        // A free-form object (the error body's `data`): any object type of the SDK fits.
        if (Object.keys(schema.properties ?? {}).length === 0 && schema.additionalProperties !== false) return;
        compareProperties(object, schema, where);
        return;
      }
      default:
        problems.push(`${where}: the check does not understand the schema ${JSON.stringify(input).slice(0, 120)}`);
    }
  };

  const compareProperties = (type: ts.Type, schema: Schema, where: string, ignore = new Set<string>()): void => {
    const properties = schema.properties ?? {};
    const required = new Set(schema.required ?? []);
    const sdkProperties = new Map(
      checker
        .getPropertiesOfType(type)
        .filter((symbol) => !ignore.has(symbol.name))
        .map((symbol) => [symbol.name, symbol]),
    );
    for (const name of sdkProperties.keys()) {
      if (!(name in properties)) problems.push(`${where}.${name}: in the SDK, not in OpenAPI`);
    }
    for (const [name, property] of Object.entries(properties)) {
      const symbol = sdkProperties.get(name);
      if (!symbol) {
        problems.push(`${where}.${name}: in OpenAPI (${required.has(name) ? 'required' : 'optional'}), missing from the SDK`);
        continue;
      }
      const optional = (symbol.flags & ts.SymbolFlags.Optional) !== 0;
      if (required.has(name) && optional) problems.push(`${where}.${name}: required in OpenAPI, optional in the SDK`);
      if (!required.has(name) && !optional) problems.push(`${where}.${name}: optional in OpenAPI, required in the SDK`);
      compare(typeOf(symbol), property, `${where}.${name}`);
    }
  };

  /** The call signature of `payments.create` and the like on KassirClient. */
  const methodOf = (name: string): ts.Signature | undefined => {
    let type = clientType;
    for (const segment of name.split('.')) {
      const property = type.getProperty(segment);
      if (!property) return undefined;
      type = typeOf(property);
    }
    return type.getCallSignatures()[0];
  };

  const sdkByRoute = new Map<string, OperationName>();
  for (const [name, operation] of Object.entries(OPERATIONS) as [OperationName, (typeof OPERATIONS)[OperationName]][]) {
    sdkByRoute.set(`${operation.method} ${operation.path}`, name);
  }
  const documented = new Set<string>();

  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1/')) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const route = `${method.toUpperCase()} ${path}`;
      documented.add(route);
      const name = sdkByRoute.get(route);
      if (!name) {
        problems.push(`${route}: in OpenAPI, but no SDK method calls it (sdk/src/operations.ts)`);
        continue;
      }
      const signed = (operation.security ?? document.security ?? []).length > 0;
      if (signed !== OPERATIONS[name].signed)
        problems.push(`${name}: ${signed ? 'signed' : 'public'} in OpenAPI, ${OPERATIONS[name].signed ? 'signed' : 'public'} in the SDK`);

      const signature = methodOf(name);
      if (!signature) {
        problems.push(`${name}: no such method on KassirClient`);
        continue;
      }
      const parameters = signature.getParameters();
      const parameter = (wanted: string) => parameters.find((symbol) => symbol.name === wanted);

      // Path parameters: the method's leading parameters, named as in the path, in order.
      const placeholders = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      const leading = parameters.slice(0, placeholders.length).map((symbol) => symbol.name);
      if (leading.join(',') !== placeholders.join(',')) {
        problems.push(`${name}: path parameters (${placeholders.join(', ')}) but the method starts with (${leading.join(', ')})`);
      }

      // Query: names and required-ness (values are strings on the wire; the SDK may take numbers and dates).
      const query = (operation.parameters ?? []).filter((p) => p.in === 'query');
      const queryParameter = parameter('query');
      if (query.length > 0 && !queryParameter) problems.push(`${name}: OpenAPI takes query parameters, the method has no \`query\` parameter`);
      if (queryParameter) {
        const queryType = checker.getNonNullableType(typeOf(queryParameter));
        const sdkNames = new Map(checker.getPropertiesOfType(queryType).map((symbol) => [symbol.name, symbol]));
        for (const sdkName of sdkNames.keys()) {
          if (!query.some((p) => p.name === sdkName)) problems.push(`${name} query.${sdkName}: in the SDK, not in OpenAPI`);
        }
        for (const p of query) {
          const symbol = sdkNames.get(p.name);
          if (!symbol) problems.push(`${name} query.${p.name}: in OpenAPI, missing from the SDK`);
          else if (Boolean(p.required) === ((symbol.flags & ts.SymbolFlags.Optional) !== 0)) {
            problems.push(`${name} query.${p.name}: ${p.required ? 'required' : 'optional'} in OpenAPI, not in the SDK`);
          }
        }
      }

      // The body: JSON, or (upload routes) JSON or multipart with a file, which the SDK takes as one `input`.
      const content = operation.requestBody?.content ?? {};
      const jsonBody = content['application/json']?.schema;
      const multipartBody = content['multipart/form-data']?.schema;
      if (multipartBody) {
        const inputParameter = parameter('input');
        if (!inputParameter) {
          problems.push(`${name}: OpenAPI takes a JSON or multipart body, the method has no \`input\` parameter`);
        } else {
          // The SDK sends the file as part `receipt` and the JSON fields as one `data` part.
          const parts = resolve(multipartBody).properties ?? {};
          const inputType = checker.getNonNullableType(typeOf(inputParameter));
          const receipt = parts.receipt ? resolve(parts.receipt) : undefined;
          const takesFile = receipt !== undefined && (receipt.contentMediaType !== undefined || receipt.format === 'binary');
          if (takesFile !== (inputType.getProperty('file') !== undefined)) {
            problems.push(
              `${name} input.file: ${takesFile ? 'OpenAPI takes a `receipt` file part, the SDK no file' : 'the SDK sends a file, OpenAPI has no `receipt` file part'}`,
            );
          }
          if (!parts.data) problems.push(`${name}: the multipart body has no \`data\` part for the JSON fields`);
          if (jsonBody) compareProperties(inputType, resolve(jsonBody), `${name} input`, new Set(['file']));
        }
      } else if (jsonBody) {
        const bodyParameter = parameter('body');
        if (!bodyParameter) problems.push(`${name}: OpenAPI takes a JSON body, the method has no \`body\` parameter`);
        else compare(typeOf(bodyParameter), jsonBody, `${name} body`);
      }

      // The answer (a JSON 2xx; a file download has no schema to compare).
      const success = operation.responses?.['200'] ?? operation.responses?.['201'];
      const answerSchema = success?.content?.['application/json']?.schema;
      if (answerSchema) {
        const returned = signature.getReturnType();
        compare(checker.getAwaitedType(returned) ?? returned, answerSchema, `${name} answer`);
      }
    }
  }
  for (const [route, name] of sdkByRoute) {
    if (!documented.has(route)) problems.push(`${name}: calls ${route}, which the OpenAPI document does not have`);
  }
  return problems;
}

/** The OpenAPI document of a running service (`http://…`) or from a file. */
export async function loadOpenApi(source: string): Promise<OpenApiDocument> {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(`${source.replace(/\/+$/, '')}/openapi.json`);
    if (!response.ok) throw new Error(`GET ${source}/openapi.json answered ${response.status}`);
    return (await response.json()) as OpenApiDocument;
  }
  return JSON.parse(await readFile(source, 'utf8')) as OpenApiDocument;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const source = process.argv[2] ?? process.env.KASSIR_URL ?? 'http://localhost:8080';
  const problems = checkOpenApi(await loadOpenApi(source));
  if (problems.length === 0) {
    console.log(`The SDK matches the OpenAPI document of ${source}: ${Object.keys(OPERATIONS).length} operations.`);
  } else {
    console.error(`The SDK and the OpenAPI document of ${source} differ:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    process.exitCode = 1;
  }
}
