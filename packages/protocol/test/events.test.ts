import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AgentEvent, AgentStreamFrame, RunEvent, StreamFrame, TurnStreamFrame } from '../src/index.js';

const turnDone = {
  event: 'done',
  mode: 'plan',
  user_message_id: randomUUID(),
  assistant_message_id: randomUUID(),
  total_tokens: 42,
  summarized: false,
};

describe('the stream event union', () => {
  it.each([
    [{ event: 'tool_start', tool: 'read_file', args: { file_path: '/src/a.ts' } }],
    [{ event: 'tool_done', tool: 'read_file', result_summary: '120 lines' }],
    [{ event: 'thinking', message: 'looking around' }],
    [{ event: 'response', text: 'The answer' }],
    [{ event: 'chunk', data: 'The answer' }],
  ])('accepts a complete %o from an agent', (frame) => {
    expect(AgentEvent.parse(frame)).toEqual(frame);
    expect(StreamFrame.parse(frame)).toEqual(frame);
  });

  it.each([
    ['tool_start without args', { event: 'tool_start', tool: 'read_file' }],
    ['tool_start without tool', { event: 'tool_start', args: {} }],
    ['tool_done without result_summary', { event: 'tool_done', tool: 'bash' }],
    ['thinking without message', { event: 'thinking' }],
    ['response without text', { event: 'response' }],
    ['chunk without data', { event: 'chunk' }],
    ['chunk whose data is not text', { event: 'chunk', data: 3 }],
    ['error without any text', { event: 'error' }],
    ['done without mode', { event: 'done' }],
    ['done with a mode that does not exist', { event: 'done', mode: 'yolo' }],
    ['an unknown kind', { event: 'telemetry', value: 1 }],
  ])('rejects %s', (_name, frame) => {
    expect(StreamFrame.safeParse(frame).success).toBe(false);
    expect(AgentStreamFrame.safeParse(frame).success).toBe(false);
  });

  it('lets a reader narrow on the kind without optional fields', () => {
    const frame = StreamFrame.parse({ event: 'tool_done', tool: 'grep_content', result_summary: '3 lines' });
    // Compiles only because the kind decides which fields exist.
    const shown = frame.event === 'tool_done' ? `${frame.tool}: ${frame.result_summary}` : '';
    expect(shown).toBe('grep_content: 3 lines');
  });

  it('does not type-check an event missing its fields either', () => {
    // @ts-expect-error: a tool_start without args is not an AgentEvent (npm run typecheck checks this line)
    const missing: AgentEvent = { event: 'tool_start', tool: 'bash' };
    expect(AgentEvent.safeParse(missing).success).toBe(false);
  });

  it('reads both forms of an error frame', () => {
    expect(StreamFrame.parse({ event: 'error', error_message: 'boom' })).toEqual({ event: 'error', error_message: 'boom' });
    expect(StreamFrame.parse({ event: 'error', data: 'old boom' })).toEqual({ event: 'error', data: 'old boom' });
  });

  it('keeps what a streamed turn stored in its done frame, and a plain done as it is', () => {
    expect(StreamFrame.parse(turnDone)).toEqual(turnDone);
    expect(StreamFrame.parse({ event: 'done', mode: 'default' })).toEqual({ event: 'done', mode: 'default' });
  });

  it('asks the streamed turn for the stored message ids in its done frame', () => {
    expect(TurnStreamFrame.parse(turnDone)).toEqual(turnDone);
    expect(TurnStreamFrame.safeParse({ event: 'done', mode: 'default' }).success).toBe(false);
  });

  it('does not let the service send the legacy error form', () => {
    expect(AgentStreamFrame.safeParse({ event: 'error', data: 'old boom' }).success).toBe(false);
    expect(TurnStreamFrame.safeParse({ event: 'error', data: 'old boom' }).success).toBe(false);
    expect(RunEvent.safeParse({ event: 'error', data: 'old boom' }).success).toBe(false);
  });

  it("reads a stored run's events, keeping a turn's done fields and a plain done as it is", () => {
    expect(RunEvent.parse(turnDone)).toEqual(turnDone);
    expect(RunEvent.parse({ event: 'done', mode: 'plan' })).toEqual({ event: 'done', mode: 'plan' });
    expect(RunEvent.parse({ event: 'thinking', message: 'Queued' })).toEqual({ event: 'thinking', message: 'Queued' });
    expect(RunEvent.safeParse({ event: 'telemetry', value: 1 }).success).toBe(false);
  });
});
