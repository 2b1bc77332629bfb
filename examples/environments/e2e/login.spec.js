const { test, expect } = require('@playwright/test')

test('login', async ({ page }) => {
  await page.goto(`${process.env.BASE_URL}/login`)
  await page.getByLabel('Email').fill('monitor@example.com')
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible()
})
