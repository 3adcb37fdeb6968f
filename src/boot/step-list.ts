/**
 * A start as a list of named steps run by one loop: each step is given what the steps before it
 * made and adds its own part (it never changes one); before each step the start may be called off
 * (the signal's reason is thrown, and the caller closes what was opened).
 */
interface Step {
  name: string;
  run(made: object): object | Promise<object>;
}

export class StepList<First extends object, Made extends object = First> {
  private constructor(private readonly steps: readonly Step[]) {}

  /** An empty list, for a start given `First`. */
  static of<First extends object>(): StepList<First> {
    return new StepList<First>([]);
  }

  /** This list and one step more, whose part is added to what is made. */
  step<Part extends object>(name: string, run: (made: Made) => Part | Promise<Part>): StepList<First, Made & Part> {
    return new StepList<First, Made & Part>([...this.steps, { name, run: run as Step["run"] }]);
  }

  /** Runs every step in order from `first` (`begins` told each one's name); what all of them made. */
  async run(first: First, signal?: AbortSignal, begins?: (name: string) => void): Promise<Made> {
    let made: object = first;
    for (const step of this.steps) {
      signal?.throwIfAborted();
      begins?.(step.name);
      made = { ...made, ...(await step.run(made)) };
    }
    return made as Made;
  }
}
