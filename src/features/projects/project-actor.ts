/** A project's running actor (actors/projects/project.machine.ts). */
import type { Actor } from "xstate";
import type { projectMachine } from "../../../actors/projects/project.machine.ts";

export type ProjectActor = Actor<typeof projectMachine>;
