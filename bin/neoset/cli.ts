// `kubectl neoset`: the edge between a command line and the cluster. Parses and validates the
// arguments, answers --help, runs one command, and maps every error to a documented exit code.
import { parseInvocation, topicOf } from './args.ts';
import type { Io } from './commands/io.ts';
import { CliError, EXIT_OK, EXIT_USAGE } from './errors.ts';
import { helpText } from './help.ts';

export async function main(argv: string[], io: Io): Promise<number> {
  let parsed: string | undefined;
  try {
    const invocation = parseInvocation(argv);
    parsed = invocation.topic;
    if (invocation.kind === 'help') {
      io.out.write(helpText(invocation.topic));
      return EXIT_OK;
    }
    const { run } = await import('./run.ts');
    return await run(invocation.cluster, invocation.command, io);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    io.err.write(`error: ${err.message}\n`);
    if (err.exitCode === EXIT_USAGE) {
      // A flag parseArgs refused comes before the command is known: guess it from the words.
      const topic = err.topic ?? parsed ?? topicOf(argv.filter((a) => !a.startsWith('-')));
      io.err.write(`See '${['kubectl neoset', topic, '--help'].filter(Boolean).join(' ')}' for usage.\n`);
    }
    return err.exitCode;
  }
}
