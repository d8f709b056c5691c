/** Temporary credentials for a consumer's own queue, as the cloud's token service gives them. */
export interface QueueCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration: Date;
}

/** What the credentials issuer is asked for: one role, one queue, one client. */
export interface QueueCredentialsRequest {
  readonly clientId: string;
  readonly roleArn: string;
  readonly queueArn: string;
  readonly sessionName: string;
  /** A session policy: the credentials can never do more than this, whatever the role allows. */
  readonly sessionPolicy: string;
  readonly durationSeconds: number;
}
