// A file of a multipart upload, as the HTTP layer hands it to a service (bytes in memory, within the operation's
// `x-max-request-bytes`).
export type UploadedFile = {
  field: string;
  filename: string;
  mimeType: string;
  size: number;
  data: Buffer;
};
