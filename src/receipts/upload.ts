import { fileTypeFromBuffer } from 'file-type';
import { DomainError } from '../errors.js';

/** Spec "Limits": receipt files up to 10 MB. */
export const MAX_RECEIPT_BYTES = 10 * 1024 * 1024;
/** DESIGN.md decision 4: PAY_009 for an oversized file up to a body of at least 20 MB; 413 beyond. */
export const MAX_UPLOAD_BODY_BYTES = 25 * 1024 * 1024;
/** Spec formats png, jpg, jpeg, webp, heic, pdf — judged by the bytes, never by the name. */
const ALLOWED_TYPES = new Map([
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['webp', 'image/webp'],
  ['heic', 'image/heic'],
  ['pdf', 'application/pdf'],
]);

export interface StoredFile {
  key: string;
  contentType: string;
  extension: string;
  size: number;
  sha256: Buffer;
}

/** What an upload route received, after the signature over every byte was checked. */
export interface UploadInput {
  file?: StoredFile;
  /** Text fields of the form, or the JSON body's top-level fields. */
  fields: Record<string, unknown>;
  /** The `data` part parsed as a JSON object (spec: "data (string, JSON part)"). */
  data: Record<string, unknown>;
}

/**
 * What a receipt upload accepts (spec "Limits" and "POST /v1/payments/{id}/receipt"): the HTTP
 * edge streams the file part to the file store under these rules (route config `upload`).
 */
export const RECEIPT_FILES = {
  /** Spec: "receipt (file; names attachment, file, proof are also accepted)". */
  fileFields: new Set(['receipt', 'attachment', 'file', 'proof']),
  maxFileBytes: MAX_RECEIPT_BYTES,
  maxBodyBytes: MAX_UPLOAD_BODY_BYTES,
  /** Enough of the head of a file for file-type to recognise every allowed format. */
  sniffBytes: 4100,
  async accept(head: Buffer): Promise<{ contentType: string; extension: string } | undefined> {
    const extension = (await fileTypeFromBuffer(head))?.ext;
    if (extension === undefined) return undefined;
    const contentType = ALLOWED_TYPES.get(extension);
    return contentType === undefined ? undefined : { contentType, extension };
  },
  refuse: {
    field: (name: string) => new DomainError('PAY_002', `Unexpected file field ${name}; send the receipt as receipt (or attachment, file, proof)`),
    another: () => new DomainError('PAY_002', 'Send one receipt file per request'),
    tooLarge: () => new DomainError('PAY_009', `The receipt file is larger than ${MAX_RECEIPT_BYTES / 1024 / 1024} MB`),
    type: () => new DomainError('PAY_010', 'The receipt must be a png, jpg/jpeg, webp, heic or pdf file (judged by its content)'),
  },
};
