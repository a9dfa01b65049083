/**
 * A stand-in for omp's package, which omp resolves for an extension (tests/node loads no omp): its prompt-template
 * functions, which the omp entry calls, with two templates. Read on omp 18.2.3 (`config/prompt-templates.ts`).
 */
export type PromptTemplate = { name: string; content: string }

export async function loadPromptTemplates(): Promise<PromptTemplate[]> {
  return [
    { name: 'greet', content: 'Say hello to $1' },
    { name: 'bye', content: 'Say bye to $1' },
  ]
}

export function expandPromptTemplate(text: string, templates: PromptTemplate[]): string {
  const [, name, args] = /^\/(\S+) (\S+)$/.exec(text) ?? []
  const template = templates.find(t => t.name === name)
  return template === undefined ? text : template.content.replace('$1', args ?? '')
}
