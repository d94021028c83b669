import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Diff, Hunk, parseDiff, type FileData } from 'react-diff-view';
import 'react-diff-view/style/index.css';
import type { RevertInput, RevertResponse, RunChangesResponse } from '@mada/protocol';
import { exactText } from '@mada/protocol/browser';
import { api, ApiError } from './api.js';

/*
 * A run's changes, a diff per file, and Revert. Loaded with the run page only once the run has
 * ended (the route answers 409 before), and kept in its own chunk with the diff viewer.
 */

const CHANGED_SINCE = 'Files changed since the run: ';
const LEFT_WORKSPACE = 'Working directory no longer in your workspace';
const NO_CHECKPOINT = 'No checkpoint for this run';

/**
 * The service's diff, its notes apart: `# ...` lines (files left out for their size, a diff cut
 * at 1 MiB) cannot be lines of a hunk, which all start with a space, `+`, `-` or `\`. The text is
 * shown exactly, invisible and reordering characters by name, before it is parsed.
 */
function splitDiff(diff: string): { notes: string[]; files: FileData[] } {
  const notes: string[] = [];
  const kept: string[] = [];
  for (const line of exactText(diff).split('\n')) (line.startsWith('# ') ? notes : kept).push(line);
  return { notes: notes.map((note) => note.slice(2)), files: parseDiff(kept.join('\n')) };
}

const strip = (path: string): string => path.replace(/^[ab]\//, '');

function FileDiff({ file }: { file: FileData | undefined }) {
  if (!file || file.hunks.length === 0) return <p className="small">No line to show: a binary file, a mode change, or past the cut.</p>;
  return (
    <div className="diff-box">
      <Diff viewType="unified" diffType={file.type} hunks={file.hunks}>
        {(hunks) => hunks.map((hunk) => <Hunk key={hunk.content} hunk={hunk} />)}
      </Diff>
    </div>
  );
}

/** What a refused revert means, in words, and whether forcing it is the way on. */
function explain(error: Error): { text: string; canForce: boolean } {
  if (!(error instanceof ApiError)) return { text: 'The service did not answer.', canForce: false };
  if (error.status === 409 && error.detail.startsWith(CHANGED_SINCE)) {
    return {
      text: `These files changed after the run ended: ${error.detail.slice(CHANGED_SINCE.length)}. Reverting anyway puts them back as they were before the run, and what changed since is lost.`,
      canForce: true,
    };
  }
  if (error.status === 409 && error.detail.startsWith(LEFT_WORKSPACE)) {
    return {
      text: `${error.detail}. An admin has taken this directory out of your workspace since the run, and what stands there now may be someone else's: nothing there is shown or reverted.`,
      canForce: false,
    };
  }
  return { text: error.detail, canForce: false };
}

export function Changes({ runId }: { runId: string }) {
  const client = useQueryClient();
  const path = `/runs/${encodeURIComponent(runId)}`;
  const changes = useQuery({ queryKey: ['changes', runId], queryFn: () => api<RunChangesResponse>('GET', `${path}/changes`) });
  const parsed = useMemo(() => (changes.data ? splitDiff(changes.data.diff) : null), [changes.data]);
  const [reverted, setReverted] = useState<string[] | null>(null);
  const revert = useMutation({
    mutationFn: (force: boolean) => api<RevertResponse>('POST', `${path}/revert`, { force } satisfies RevertInput),
    onSuccess: (answer) => setReverted(answer.reverted),
    onSettled: () => client.invalidateQueries({ queryKey: ['changes', runId] }),
  });

  if (changes.error) {
    const detail = changes.error instanceof ApiError ? changes.error.detail : changes.error.message;
    return (
      <section aria-labelledby="changes-title">
        <h2 id="changes-title">Changes</h2>
        <p className={detail.startsWith(NO_CHECKPOINT) ? 'small' : 'error'}>
          {detail.startsWith(NO_CHECKPOINT) ? `No changes recorded. ${detail}.` : explain(changes.error).text}
        </p>
      </section>
    );
  }
  if (!changes.data || !parsed) return <p aria-busy="true">Loading the changes…</p>;
  const { files } = changes.data;
  const refusal = revert.error ? explain(revert.error) : null;
  return (
    <section aria-labelledby="changes-title">
      <h2 id="changes-title">Changes</h2>
      {files.length === 0 ? <p>The run changed no file.</p> : null}
      {parsed.notes.map((note) => (
        <p key={note} className="small">
          {note}
        </p>
      ))}
      {files.map((file) => (
        <article key={file.path} className="file" aria-label={`Changes to ${exactText(file.path)}`}>
          <h3 className="path">
            {exactText(file.path)}{' '}
            <span className="small">
              {file.change} · +{file.additions} −{file.deletions}
            </span>
          </h3>
          <FileDiff file={parsed.files.find((diff) => strip(diff.newPath) === exactText(file.path) || strip(diff.oldPath) === exactText(file.path))} />
        </article>
      ))}
      {files.length > 0 ? (
        <div className="revert">
          <button type="button" className="deny" disabled={revert.isPending} onClick={() => revert.mutate(false)}>
            Revert
          </button>
          {refusal ? (
            <div role="alert">
              <p className="error">{refusal.text}</p>
              {refusal.canForce ? (
                <button type="button" className="deny" disabled={revert.isPending} onClick={() => revert.mutate(true)}>
                  Revert anyway
                </button>
              ) : null}
            </div>
          ) : null}
          {reverted && !revert.error ? (
            <p role="status">Reverted: {reverted.map(exactText).join(', ') || 'nothing'}.</p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
