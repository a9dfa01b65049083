/**
 * A stand-in for pi's `CustomEditor`, which the extension imports from pi's package (pi resolves it for an
 * extension; tests/node loads no pi): what the extension relies on of pi-tui's `Editor`, read on pi 1.6.0. `onSubmit`
 * is a field, which pi sets once the editor factory returned; Enter hands it the trimmed text and empties the editor.
 */
export class CustomEditor {
  onSubmit?: (text: string) => void
  text = ''
  /** The lines Up brings back, newest first. */
  readonly history: string[] = []

  addToHistory(text: string): void {
    this.history.unshift(text)
  }

  /** The person presses Enter. */
  submit(): void {
    const text = this.text.trim()
    this.text = ''
    this.onSubmit?.(text)
  }
}
