/** A setting a process cannot start with (environment variable, flag); the message names it. Exit 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
