/**
 * History <-> JSON in the format of `temporal workflow show --output json` (ProtoJSON).
 *
 * Does what historyToJSON/historyFromJSON from @temporalio/common/lib/proto-utils do, with the
 * protobufjs instance @temporalio/proto is built on. The SDK functions throw "type must be a
 * Type" when npm installs separate copies of protobufjs 8 under @temporalio/common and
 * @temporalio/proto, which it does here because @grpc/proto-loader holds protobufjs 7 at the
 * top level. Resolving protojson from @temporalio/proto's own folder works in either layout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';

export type History = temporal.api.history.v1.IHistory;

interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
}

const protoDir = path.dirname(require.resolve('@temporalio/proto/package.json'));
const protojson: ProtoJson = require(require.resolve('protobufjs/ext/protojson', { paths: [protoDir] }));
const HistoryType = temporal.api.history.v1.History;

export function historyToJSON(history: History): string {
  return JSON.stringify(protojson.toJson(HistoryType, HistoryType.fromObject(history)), null, 2);
}

export function historyFromJSON(json: unknown): temporal.api.history.v1.History {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { events?: unknown }).events)) {
    throw new TypeError('not a history: expected an object with an array of events');
  }
  // Tolerate fields a newer server adds, as the SDK does.
  return protojson.fromJson(HistoryType, json, { ignoreUnknownFields: true }) as temporal.api.history.v1.History;
}

/** A recorded history file, with the workflow id its first event names (replay needs it). */
export function readHistoryFile(file: string): { workflowId: string; history: temporal.api.history.v1.History } {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(file, 'utf8')));
  const started = history.events[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`${file}: the first event is not WorkflowExecutionStarted`);
  return { workflowId: started.workflowId || path.basename(file, '.json'), history };
}
