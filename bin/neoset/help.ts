// `--help` for every command, in kubectl's layout (description, examples, options, usage).

const GLOBAL = `Global options:
  --context='': The kubeconfig context to use.
  --kubeconfig='': Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
  -n, --namespace='': The namespace of the NeoSet (default: the context's namespace, then "default").
  -h, --help: Show this help.`;

const EXIT_CODES = `Exit codes: 0 done; 1 rollout failed or timed out (rollout status); 2 bad command line;
3 NeoSet or revision not found, or the API server refused or could not be reached.`;

interface Help {
  about: string;
  examples: string;
  options?: string;
  usage: string;
}

const HELP: Record<string, Help> = {
  '': {
    about: `Manage NeoSets (neosets.neo.io): StatefulSets with in-place, canary and batched rollouts.

Available commands:
  dashboard  Serve a local web page that shows NeoSets and their rollouts live, with rollout buttons
  get        List NeoSets with their rollout progress and the pods being updated now
  rollout    Manage the rollout of a NeoSet (status, history, undo, pause, resume, promote, abort, retry)
  version    Print the plugin's version and the installed functions' versions`,
    examples: `  kubectl neoset get
  kubectl neoset rollout status mysql`,
    usage: 'kubectl neoset [command] [options]',
  },
  rollout: {
    about: `Manage the rollout of a NeoSet.

Available commands:
  abort      Abort a canary with steps: pods return in place to the current revision
  history    View the revision history
  pause      Stop starting new pod updates (updates in flight finish)
  promote    Take the next canary step: lower the partition by one batch and resume (with steps: the next step)
  retry      Start the canary steps of an aborted rollout again
  resume     Resume a paused rollout
  status     Show the status of the rollout, waiting until it is done
  undo       Roll back to a previous revision`,
    examples: `  kubectl neoset rollout promote mysql
  kubectl neoset rollout undo mysql --to-revision=1`,
    usage: 'kubectl neoset rollout SUBCOMMAND NAME [options]',
  },
  get: {
    about: `List NeoSets, or show one: the columns of \`kubectl get neo\` and the pods being updated now.`,
    examples: `  # Every NeoSet in the current namespace
  kubectl neoset get

  # One NeoSet in another namespace
  kubectl neoset get mysql -n db`,
    usage: 'kubectl neoset get [NAME] [options]',
  },
  dashboard: {
    about: `Serve a local web page that shows the NeoSets of the namespace (or all namespaces) live:
phase, replicas, images, each one's pods by ordinal coloured by revision, the partition line,
conditions, canary step, revision history and recent Events; with buttons for promote, promote
--full, pause, resume, abort, retry and undo that make the same conditional writes, with the same
messages, as the rollout commands. Prints the URL and serves until Ctrl-C.

The page acts with your Kubernetes credentials, so the URL it prints carries a token new with each
run (http://127.0.0.1:3100/?token=...): the first load swaps it for a cookie (HttpOnly,
SameSite=Strict) and every request without it is refused, the page as well as the API. Scripts may
send it as "Authorization: Bearer TOKEN". It listens on 127.0.0.1 unless told otherwise, and warns
on any other --address; every write button asks for confirmation; and it refuses any request whose
Host is not its own, and any write whose Origin is not (no writes from another site's page).`,
    examples: `  # The NeoSets of the current namespace, on http://127.0.0.1:3100/?token=...
  kubectl neoset dashboard

  # From another machine: keep the default address and tunnel to it, then open the printed URL there
  ssh -L 3100:127.0.0.1:3100 HOST kubectl neoset dashboard

  # Every namespace, on another port, without the write buttons (a shared screen)
  kubectl neoset dashboard --all-namespaces --port 8080 --read-only`,
    options: `  --address='127.0.0.1': The address to listen on (an IP address, or localhost); warns if not loopback.
  -A, --all-namespaces=false: Show the NeoSets of every namespace (not with --namespace).
  --port=3100: The port to listen on; 0 picks a free one.
  --read-only=false: Show no write buttons, and refuse writes.`,
    usage: 'kubectl neoset dashboard [options]',
  },
  version: {
    about: `Print the plugin's version, then each installed function's (reconcile, readiness, admission)
with where it was read. Each function is found where it runs in neoset-system:
  a Knative Service     its latest ready revision's /healthz through the API server's service proxy
                        (needs get on services/proxy, as edit or admin there give), else that
                        revision's image tag (view there); a revision scaled to zero is not woken:
                        "scaled to zero" and its image tag;
  a Deployment+Service  (knative/eventing-only/, the default npm run dev; admission always) its
                        /healthz through the service proxy, else the Deployment's image tag.
--function-url NAME=URL asks URL/healthz instead (npm run dev -- --bridge runs the functions on this
machine and prints their URLs; an https certificate is not verified: only a version is read).
A function that cannot be asked is shown "unreachable" with why; that is not an error.`,
    examples: `  # The plugin and the functions installed in the cluster
  kubectl neoset version

  # The plugin only
  kubectl neoset version --client

  # The functions of npm run dev -- --bridge (processes on this machine)
  kubectl neoset version --function-url reconcile=http://127.0.0.1:8081 \\
    --function-url readiness=http://127.0.0.1:8082 --function-url admission=https://127.0.0.1:8443`,
    options: `  --client=false: Print only the plugin's version; the cluster is not contacted.
  --function-url=[]: NAME=URL: read function NAME's version from URL/healthz (repeat for each function).`,
    usage: 'kubectl neoset version [options]',
  },
  'rollout status': {
    about: `Show the status of the rollout.

Waits until the NeoSet's status reports its latest generation and the rollout is done: with a
partition, until every pod at or above the partition runs the update revision and all pods are
Ready ("partitioned roll out complete"); without one, until every pod runs the update revision
("roll out complete"). Exits 1 if the rollout fails (phase Failed: the reason is printed) or
--timeout passes first. On a terminal it shows a live progress display; otherwise one line per
change. The status is read once a second.`,
    examples: `  # Wait for the rollout of mysql
  kubectl neoset rollout status mysql

  # Give up after five minutes
  kubectl neoset rollout status mysql --timeout=5m

  # Print the status once
  kubectl neoset rollout status mysql --watch=false`,
    options: `  --timeout=0s: How long to wait before giving up (a duration such as 30s, 5m or 1h); 0 waits forever.
  -w, --watch=true: Wait until the rollout is done; --watch=false prints the status once.`,
    usage: 'kubectl neoset rollout status NAME [options]',
  },
  'rollout history': {
    about: `View the revision history: each revision's number, images, data format (the template's
neo.io/data-format annotation), change-cause (the kubernetes.io/change-cause annotation), and which
revision is current (stable) and which is the update revision. With --revision, print that
revision's pod template.`,
    examples: `  kubectl neoset rollout history mysql
  kubectl neoset rollout history mysql --revision=2`,
    options: `  --revision=0: Print the pod template of this revision.`,
    usage: 'kubectl neoset rollout history NAME [options]',
  },
  'rollout undo': {
    about: `Roll back to a previous revision: write its pod template into spec.template (and its
change-cause into the NeoSet's annotation). The controller reuses that revision and patches the
pods back in place. Says so, and changes nothing, when the template is already there.

In place keeps the pods' volumes. When the revision's template declares a lower data format
(annotation neo.io/data-format) than one the pods ran, admission refuses the rollback, naming both
formats and the pods, unless the NeoSet carries the acknowledgement of exactly that downgrade
(annotation neoset.neo.io/data-format-downgrade: "FROM->TO"), which
--accept-data-format-downgrade sets in the same write. An undo without it removes an earlier one.`,
    examples: `  # Back to the revision before the current template
  kubectl neoset rollout undo mysql

  # Back to revision 1
  kubectl neoset rollout undo mysql --to-revision=1

  # What it would do: template, images, data format, each pod, and admission's answer
  kubectl neoset rollout undo mysql --to-revision=1 --dry-run

  # Back to a revision that writes an older data format, knowing the volumes hold a newer one
  kubectl neoset rollout undo mysql --to-revision=1 --accept-data-format-downgrade`,
    options: `  --to-revision=0: The revision to roll back to; 0 means the previous one.
  --dry-run=false: Print what the rollback would do and send it with dryRun=All (server side:
      admission judges it), changing nothing; exit 3 when it would be refused. --dry-run=server
      is the same, --dry-run=none is no dry run.
  --accept-data-format-downgrade=false: Accept that the revision writes a lower data format than
      the pods ran: set neoset.neo.io/data-format-downgrade: "FROM->TO" in the same write.`,
    usage: 'kubectl neoset rollout undo NAME [options]',
  },
  'rollout pause': {
    about: `Pause the rollout (spec.updateStrategy.pause: true): no new pod update starts; updates in
flight finish.`,
    examples: `  kubectl neoset rollout pause mysql`,
    usage: 'kubectl neoset rollout pause NAME [options]',
  },
  'rollout resume': {
    about: `Resume a paused rollout (spec.updateStrategy.pause: false).`,
    examples: `  kubectl neoset rollout resume mysql`,
    usage: 'kubectl neoset rollout resume NAME [options]',
  },
  'rollout promote': {
    about: `Take the next canary step: lower spec.updateStrategy.partition by one batch (maxUnavailable
pods, a percentage resolved against replicas) and clear pause. With --full, go to partition 0: the
whole NeoSet is updated. A NeoSet with canary steps (spec.updateStrategy.canary.steps) moves to the
next step instead (--full: past the last), written to status.canary; spec is not touched.`,
    examples: `  # partition 4 -> 2 with maxUnavailable 2, and resume
  kubectl neoset rollout promote mysql

  # Finish the rollout
  kubectl neoset rollout promote mysql --full`,
    options: `  --full=false: Set the partition to 0 instead of lowering it by one batch (with steps: skip to the end).`,
    usage: 'kubectl neoset rollout promote NAME [options]',
  },
  'rollout abort': {
    about: `Abort a canary that has steps (spec.updateStrategy.canary.steps): every pod returns in place
to the current revision; spec stays as written. The phase becomes Failed with reason Aborted until
\`rollout retry\` or a new template. Written to status.canary (the status subresource).`,
    examples: `  kubectl neoset rollout abort mysql`,
    usage: 'kubectl neoset rollout abort NAME [options]',
  },
  'rollout retry': {
    about: `Start the canary steps of an aborted rollout (by hand, or by a failed analysis) again at
step 1, on the same template.`,
    examples: `  kubectl neoset rollout retry mysql`,
    usage: 'kubectl neoset rollout retry NAME [options]',
  },
};

export function helpText(topic: string): string {
  const h = HELP[topic];
  const parts = [h.about, `Examples:\n${h.examples}`];
  if (h.options) parts.push(`Options:\n${h.options}`);
  parts.push(GLOBAL, `Usage:\n  ${h.usage}`, EXIT_CODES);
  return `${parts.join('\n\n')}\n`;
}
